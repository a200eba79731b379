// The real Kilo Code CLI 7.7.9 (this folder's pinned npm install): its binary, and Kilo's own
// switches for what opencode's env turns off (no update, model list, sharing, telemetry). The
// world is opencode's (../opencode/harness.mjs), which runs this binary in opencode's place.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const kiloPath = path.join(here, 'node_modules/@kilocode/cli-linux-x64/bin/kilo');
export const kiloEnv = {
  KILO_DISABLE_AUTOUPDATE: 'true', KILO_DISABLE_MODELS_FETCH: 'true', KILO_DISABLE_SHARE: 'true',
  KILO_DISABLE_SESSION_INGEST: 'true', KILO_DISABLE_PRESENCE: 'true', KILO_DISABLE_LSP_DOWNLOAD: 'true',
  KILO_DISABLE_CODEBASE_INDEXING: 'true', KILO_TELEMETRY_LEVEL: 'off',
};
