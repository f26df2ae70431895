import type { Environment } from '@marcbachmann/cel-js';
import { isAdministrative, mfaUnprotected, parsePolicy, privilegeEscalations, serviceWildcards } from './iam-policy.js';

/**
 * The IAM policy functions of rule conditions (iam-policy.ts; content/rules/README.md, "IAM policy
 * documents"). Each takes a policy document as AWS Config records it (URL-encoded JSON), as JSON text
 * or as the object; a document that is none of these is an evaluation error, never a pass.
 */
export function registerIamFunctions(env: Environment): Environment {
  return env
    .registerFunction('iamPolicy(dyn): list', (doc: unknown) => parsePolicy(doc), {
      description:
        'the statements of a policy document, normalised: {sid, effect, action, notAction, resource, notResource, principal: {AWS, Service, Federated, CanonicalUser}, notPrincipal, condition}',
    })
    .registerFunction('iamAdministrative(dyn): bool', (doc: unknown) => isAdministrative(doc), {
      description: 'the document allows "*:*" administrative privileges',
    })
    .registerFunction('iamPrivilegeEscalations(dyn): list', (doc: unknown) => privilegeEscalations(doc), {
      description: 'the privilege-escalation permission sets the document grants, by name',
    })
    .registerFunction('iamServiceWildcards(dyn): list', (doc: unknown) => serviceWildcards(doc), {
      description: 'the services of which the document allows every action on every resource',
    })
    .registerFunction('iamMfaUnprotected(dyn): list', (doc: unknown) => mfaUnprotected(doc), {
      description: 'the credential and MFA actions a document meant to enforce MFA allows without MFA',
    });
}
