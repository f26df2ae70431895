import { notifications } from '@mantine/notifications';
import i18n from '../i18n';

/** The close button of a notification needs a name (axe: button-name). */
const closeButtonProps = () => ({ 'aria-label': i18n.t('close') });

/** Outcomes of actions, announced politely to screen readers too. */
export function notifySuccess(message: string): void {
  notifications.show({ color: 'teal', message, autoClose: 4000, closeButtonProps: closeButtonProps() });
}

export function notifyError(message: string): void {
  notifications.show({ color: 'red', message, autoClose: 8000, closeButtonProps: closeButtonProps() });
}
