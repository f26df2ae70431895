/** A filter that does not parse: the message and the 0-based character position of the problem. */
export class FilterError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}
