import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Builds dist/ once per run: the CLI tests start the real program, which runs the compiled code.
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Scope guard for every server a test starts: loopback and the namespace lab, nothing else.
    // Outbound requests (notification receivers, name sources, the update feed) may reach the
    // loopback fakes the tests start; without this they would be refused (docs/security.md).
    env: { NETWARDEN_SCAN_ALLOW: '127.0.0.0/8,10.66.0.0/24', NETWARDEN_OUTBOUND_ALLOW: '127.0.0.0/8' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // Most of the suite waits on sockets, child processes and timers rather than the CPU (a serial
    // run kept a 2-core machine a third busy): four test files at a time (three kept it 60 % busy).
    maxWorkers: 4,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: ['test/lab/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          // The namespace lab owns one bridge (nwlab0): its files run one at a time in one process
          // (a project's fileParallelism is not honoured), after the rest, on a quiet machine (its
          // native-engine cases wait on the kernel's neighbour table).
          name: 'lab',
          include: ['test/lab/**/*.test.ts'],
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
