/** A route option that takes one hook or several (onRequest, onSend, …), as a list to add to. */
export function hooksOf<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
