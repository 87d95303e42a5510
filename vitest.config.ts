import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ once per run: the CLI tests start the real program, which runs the compiled code.
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Scope guard for every server a test starts: loopback and the namespace lab, nothing else.
    env: { NETWARDEN_SCAN_ALLOW: '127.0.0.0/8,10.66.0.0/24' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
