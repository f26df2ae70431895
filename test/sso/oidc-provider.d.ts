// oidc-provider (a test-only dev dependency) ships no type declarations; the tests use a small part of it.
declare module 'oidc-provider' {
  const Provider: any;
  export default Provider;
}
