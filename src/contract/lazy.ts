// The contract's schemas are built on first use, not when the contract is imported. Building every schema costs a
// command-line run more than the one request it makes (a command calls one or two endpoints), and the server builds
// each one as its first request needs it.

/**
 * A stand-in for the schema `build` returns, with its type: it builds the schema when one of its properties is first
 * read, then forwards everything to it. The server, the client and the OpenAPI document use it as the schema itself;
 * one built inside another's `build` is built with it. Reading through the stand-in costs a proxy trap each time:
 * about a microsecond more to validate a send's body, whose fields are such schemas.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let schema: T | undefined;
  const real = (): T => (schema ??= build());
  return new Proxy({} as T, {
    get: (_, key) => (schema ?? real())[key as keyof T],
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    // A proxy may not report a property as non-configurable unless its own (empty) target has it.
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), key);
      return d && { ...d, configurable: true };
    },
    defineProperty: (_, key, d) => Reflect.defineProperty(real(), key, d),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}
