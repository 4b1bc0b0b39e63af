// Hop marks: named points on a message's way from the request to a test's read (accepted, claimed, composed, caught,
// read), which bench:latency's trace times. Nothing in the service listens: a mark costs the test of one variable.

let listener: ((name: string) => void) | null = null;

/** Marks that a message's way passed the point `name` (a function: worked out only when something listens). */
export function hop(name: string | (() => string)): void {
  if (listener) listener(typeof name === 'function' ? name() : name);
}

/** Sets the one listener of every mark in this process (null: none). */
export function onHop(fn: ((name: string) => void) | null): void {
  listener = fn;
}
