import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import './ui/global.css';
import './ui/contrast.css';
import { startI18n } from './i18n';
import { App } from './app/App';

// The texts of the chosen language are in place before the first render (no English flash).
void startI18n().then(() =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  ),
);
