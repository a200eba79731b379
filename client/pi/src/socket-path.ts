// Where handoffd listens by default (docs/protocol.md §1, docs/design.md §11).
import { join } from "node:path";

import { HandoffError } from "./errors.js";

/**
 * $HANDOFF_SOCKET when set, else $XDG_RUNTIME_DIR/handoff/handoffd.sock (the daemon's own
 * default). Throws a HandoffError ("not-connected") when neither is set, naming both.
 */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env["HANDOFF_SOCKET"];
  if (explicit !== undefined && explicit !== "") return explicit;
  const runtime = env["XDG_RUNTIME_DIR"];
  if (runtime !== undefined && runtime !== "") return join(runtime, "handoff", "handoffd.sock");
  throw new HandoffError("not-connected", "no handoffd socket: set HANDOFF_SOCKET or XDG_RUNTIME_DIR, or pass socketPath");
}
