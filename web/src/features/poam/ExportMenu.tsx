import { Button, Menu } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { EXPORT_FORMATS } from './model';
import { exportUrl } from './queries';

/** The four exports as download links: GET requests that carry the session cookie; the service names the file. */
export function ExportMenu() {
  const { t } = useTranslation('poam');
  const { tenantId } = useSession();
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <Button variant="default">{t('export.menu')}</Button>
      </Menu.Target>
      <Menu.Dropdown>
        {EXPORT_FORMATS.map((format) => (
          <Menu.Item key={format} component="a" href={exportUrl(tenantId, format)} download>
            {t(`export.${format}`)}
          </Menu.Item>
        ))}
      </Menu.Dropdown>
    </Menu>
  );
}
