/** JSON with object keys sorted, so equal values have equal text whatever their key order. */
export const stableJson = (v: unknown): string =>
  v === null || typeof v !== 'object'
    ? (JSON.stringify(v) ?? 'null')
    : Array.isArray(v)
      ? `[${v.map(stableJson).join(',')}]`
      : `{${Object.keys(v as object)
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
          .join(',')}}`;
