// The inbox page's calls to the sandbox routes (the admin cookie authenticates them) and their errors, the note that
// tells what happened, and signing out: a 401 stops the live stream and says how to sign in again.
import { el } from './dom.js';

const note = el('note');
const live = el('live');

/** One thing a refused request got wrong, as a Problem's `errors` names it (`path` `q`: the search). */
export interface ProblemError {
  path?: string;
  message?: string;
}

export class ApiError extends Error {
  status: number;
  errors: ProblemError[];
  constructor(status: number, message: string, errors: ProblemError[] = []) {
    super(message);
    this.status = status;
    this.errors = errors;
  }
}

/** The path of a caught message under the sandbox routes. */
export const messagePath = (id: string) => `/sandbox/messages/${encodeURIComponent(id)}`;

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) {
    signedOut();
    throw new ApiError(401, 'Signed out.');
  }
  if (!res.ok) {
    const problem = (await res.json().catch(() => ({}))) as { detail?: string; title?: string; errors?: unknown };
    throw new ApiError(
      res.status,
      problem.detail || problem.title || `The server answered ${res.status}.`,
      Array.isArray(problem.errors) ? problem.errors : [],
    );
  }
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** Says something in the note above the list (a status region: screen readers read it out). */
export function say(text: string, ...extra: Node[]) {
  note.replaceChildren(text, ...extra);
}

/** What signing out stops: the live stream sets it when it connects. */
let stopStream: (() => void) | null = null;
export function onSignOut(stop: () => void) {
  stopStream = stop;
}

function signedOut() {
  stopStream?.();
  live.textContent = 'Signed out';
  say('Signed out: open the inbox address svc serve printed to sign in again.');
}
