/** A WHERE clause made of optional filters (list endpoints): each `and` adds one condition and its parameters. */
export class SqlWhere {
  private readonly conditions: string[] = [];
  readonly params: Array<string | number> = [];

  and(condition: string, ...params: Array<string | number>): this {
    this.conditions.push(condition);
    this.params.push(...params);
    return this;
  }

  /** `WHERE a AND b …`, or '' without conditions. */
  get sql(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }
}
