/**
 * Renderer entry: picks the ConsoleApi transport for this shell (preload IPC in Electron,
 * HTTP + WebSocket in a browser), builds the store, starts live updates and renders the app.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { ReasonRuleProvider } from './app/ReasonRule';
import { navigate } from './lib/navigation';
import { viewForConsoleView } from './lib/routes';
import { applyTheme } from './lib/theme';
import { createConsoleStore } from './store/console-store';
import { ConsoleStoreProvider } from './store/react';
import { getConsoleApi } from './transport';
import './styles/app.css';

applyTheme();

const rootEl = document.getElementById('root') ?? document.body.appendChild(document.createElement('div'));

function fatal(message: string): void {
  rootEl.innerHTML = '';
  const box = document.createElement('div');
  box.className = 'fatal';
  const h = document.createElement('h1');
  h.textContent = 'The console could not start';
  const p = document.createElement('p');
  p.textContent = message;
  box.append(h, p);
  rootEl.append(box);
}

try {
  const api = getConsoleApi();
  const consoleStore = createConsoleStore(api, { onNavigate: (v) => navigate(viewForConsoleView(v)) });
  consoleStore.actions.start();
  // Debug/e2e handle: read-only access to the store state (no api).
  (window as unknown as { __gaffer?: unknown }).__gaffer = { getState: consoleStore.store.getState };
  createRoot(rootEl).render(
    <StrictMode>
      <ConsoleStoreProvider value={consoleStore}>
        <ReasonRuleProvider>
          <App />
        </ReasonRuleProvider>
      </ConsoleStoreProvider>
    </StrictMode>,
  );
} catch (e) {
  fatal(e instanceof Error ? e.message : String(e));
}
