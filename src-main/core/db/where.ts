/**
 * A WHERE clause assembled from a list filter's optional fields. Values are always bound
 * parameters; only the column names and condition texts written here by the caller reach the SQL.
 */
export class Where {
  private readonly conditions: string[] = [];
  readonly params: Array<string | number> = [];

  /** `column = ?`, when the value is given. */
  equals(column: string, value: string | number | undefined): this {
    return value === undefined ? this : this.and(`${column} = ?`, value);
  }

  /** Any condition, with its parameters in order. */
  and(condition: string, ...params: Array<string | number>): this {
    this.conditions.push(condition);
    this.params.push(...params);
    return this;
  }

  /** `WHERE a AND b`, or '' without conditions. */
  sql(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }
}
