import { Menu } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { changeLanguage } from '../i18n';
import { LANGUAGES } from '../i18n/languages';
import { notifyError } from '../ui/notify';

/**
 * The language entries of the user menu: each language by its own name (so it is found by someone
 * who cannot read the current one), the current one ticked and marked `aria-current` (Mantine's items
 * keep the role `menuitem`, which allows no `aria-checked`). The choice is remembered in the browser.
 */
export function LanguageMenuItems() {
  const { t, i18n } = useTranslation();
  return (
    <>
      {/* A labelled group: a menu may hold items and groups only (axe: aria-required-children). */}
      <Menu.Label aria-hidden>{t('shell.language')}</Menu.Label>
      <div role="group" aria-label={t('shell.language')}>
        {LANGUAGES.map((language) => {
          const current = i18n.language === language.code;
          return (
            <Menu.Item
              key={language.code}
              lang={language.code}
              aria-current={current ? 'true' : undefined}
              rightSection={current ? '✓' : undefined}
              onClick={() => void changeLanguage(language.code).catch(() => notifyError(t('shell.languageFailed')))}
            >
              {language.name}
            </Menu.Item>
          );
        })}
      </div>
    </>
  );
}
