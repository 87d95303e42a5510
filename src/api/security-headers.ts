/**
 * The security headers every response carries (docs/security.md, "HTTP hardening"). They do not
 * depend on the request, so they are one frozen object built at start-up and copied onto each
 * reply by a single hook, instead of a chain of per-header middleware running on every request.
 * The values are those @fastify/helmet produced for this service's configuration (CSP without
 * upgrade-insecure-requests, no COEP, no HSTS: the service speaks plain HTTP on most LANs).
 * The Swagger UI under /docs replaces Content-Security-Policy with its own (see app.ts).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
].join(';');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
});
