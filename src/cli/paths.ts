// Where svc keeps things on this machine. Shared by `svc serve` (its data directory) and the client commands (the
// admin token of a local server, the config and credential files), so neither loads the other's modules.
import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

/** The user's data directory: $XDG_DATA_HOME/svc, else ~/.local/share/svc (Application Support on macOS). */
export function defaultDataDir(env: Env = process.env): string {
  if (env.SVC_DATA_DIR) return env.SVC_DATA_DIR;
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'svc');
  if (process.platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'svc');
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'svc');
}

/**
 * The user's config directory for profiles and the credential file: `SVC_CONFIG_DIR`, else the platform's
 * (the directory `conf` would pick for the project `svc` without its `-nodejs` suffix).
 */
export function defaultConfigDir(env: Env = process.env): string {
  if (env.SVC_CONFIG_DIR) return env.SVC_CONFIG_DIR;
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Preferences', 'svc');
  if (process.platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'svc', 'Config');
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'svc');
}
