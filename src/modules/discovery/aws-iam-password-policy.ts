import type { Any, AwsReader } from './aws.js';
import { errorName, PERMISSION_ERROR } from './aws-errors.js';
import { awsNode, configCase } from './inventory.js';

/** IAM's error when the account has no password policy of its own (GetAccountPasswordPolicy, HTTP 404). */
const NO_POLICY = /^NoSuchEntity(Exception)?$/;

/**
 * The account's IAM password policy, for the aws plugin: one node per account, of a type AWS Config
 * does not have (`AWS::IAM::AccountPasswordPolicy`, node type `aws.iam.account_password_policy`; its
 * paths are in content/aws-config-schema/additions.json). Its configuration is GetAccountPasswordPolicy's
 * `PasswordPolicy` camelCased as AWS Config would write it (`minimumPasswordLength`, `requireSymbols`,
 * …, `maxPasswordAge` and `passwordReusePrevention` only when set, as IAM answers).
 *
 * IAM answers NoSuchEntity when the account has no custom password policy: then IAM's default policy
 * applies, which no password-policy rule accepts (no minimum of 14 characters, no character type
 * required, no reuse prevention, no expiry). The node is written with an empty configuration, so every
 * rule judges the absent settings as its `when_missing: violation` says. A refused call (AccessDenied)
 * writes no node, with a warning: what the policy is is then unknown, neither a pass nor a violation.
 */
export async function readAccountPasswordPolicy(r: AwsReader, home: string): Promise<void> {
  const account = r.account;
  if (!account) {
    r.warnings.push("iam account password policy: the account id is not known (set account_id in the job's aws config); not read");
    return;
  }
  const c = await r.clientFor('iam', home);
  r.signal?.throwIfAborted();
  let configuration: Any;
  try {
    const out = await c.client.send(new c.mod.GetAccountPasswordPolicyCommand({}), { abortSignal: r.signal });
    configuration = configCase(out.PasswordPolicy ?? {}) as Any;
  } catch (error) {
    const name = errorName(error);
    if (NO_POLICY.test(name)) configuration = {};
    else if (PERMISSION_ERROR.test(name)) {
      r.warnings.push(`iam account password policy in ${home}: ${name}; not read`);
      return;
    } else throw error;
  }
  r.add(awsNode({ configType: 'AWS::IAM::AccountPasswordPolicy', nativeId: account, name: account, region: 'global', account, configuration }));
}
