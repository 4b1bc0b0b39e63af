// The inbox page's calls to the sandbox routes (the page's session authenticates them: session.ts) and their errors,
// and the note that tells what happened. A 401 means the session ended: the page goes to the sign-in.
import { el } from './dom.js';
import { authorization, toSignIn } from './session.js';

const note = el('note');

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
    headers: { ...authorization(), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) {
    toSignIn(true);
    throw new ApiError(401, 'The session ended.');
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
