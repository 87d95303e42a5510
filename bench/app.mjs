/**
 * The app as `netwarden serve` builds it, from a build's dist/: the services of dist/services.js
 * over a store the bench opened (and closes), with the HTTP API registered on them. No background
 * jobs (relay, recovery, maintenance, scheduler): each bench server is an instance of its own.
 * NETWARDEN_SCAN_ALLOW, NETWARDEN_OUTBOUND_ALLOW and the nmap location come from the environment,
 * read by dist/config/environment.js as serve reads them.
 */

/**
 * `dist`: a file URL ending in /. `settingsSeed`/`admin` as `initialise` takes them; `config`
 * overrides parts of the services' configuration (`scanAllow`); `parts` are given parts
 * (`engines`, `queue`, `notifier`, …); `appOptions` go to buildApp (`logger: false`).
 */
export async function openBenchApp(dist, { store, logger, settingsSeed = {}, admin = null, version, config = {}, parts = {}, appOptions = {} }) {
  const { openServerServices } = await import(new URL('services.js', dist));
  const { buildApp } = await import(new URL('api/app.js', dist));
  const { readEnvironment, scanAllowFromEnvironment, outboundAllowChecked, nmapLocation } = await import(new URL('config/environment.js', dist));
  const env = readEnvironment(process.env);
  const services = await openServerServices({
    config: {
      databaseUrl: '',
      dataDir: null,
      scanAllow: scanAllowFromEnvironment(env),
      outboundAllow: outboundAllowChecked(env),
      nmap: nmapLocation(env),
      settingsSeed,
      admin,
      ...config,
    },
    logger,
    store,
    background: false,
    ...(version ? { version } : {}),
    ...parts,
  });
  try {
    const app = await buildApp({ services, logger, ...appOptions });
    return {
      app,
      services,
      /** Stops the HTTP server, then the services; the store stays open (the bench closes it). */
      close: async () => {
        await app.close();
        await services.close();
      },
    };
  } catch (err) {
    await services.close();
    throw err;
  }
}
