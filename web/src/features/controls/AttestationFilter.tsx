import { Select } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useUrlState } from '../../ui/url-state';
import { ATTESTATION_STATUSES, type AttestationStatus } from './queries';

/** The attestation-status filter of the controls and attestations lists, kept in the URL's `attestation`. */
export function AttestationFilter({ value }: { value: AttestationStatus | undefined }) {
  const { t } = useTranslation('controls');
  const url = useUrlState();
  return (
    <Select
      label={t('filters.attestation')}
      size="sm"
      w={240}
      placeholder={t('filters.anyAttestation')}
      data={ATTESTATION_STATUSES.map((status) => ({ value: status, label: t(`attestation.${status}`) }))}
      value={value ?? null}
      onChange={(next) => url.set({ attestation: next })}
      clearable
    />
  );
}
