declare module 'stopword' {
  const lists: Record<string, string[] | ((...args: unknown[]) => unknown)>;
  export default lists;
}
