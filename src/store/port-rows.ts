/** A port as the `ports` table stores it, and as everything above the store sees it: the one conversion each way. */
import type { ScannedPort } from '../core/model.js';
import type { PortRow } from './schema.js';

/** A stored port as a scan result (CPEs parsed, the protocol narrowed). */
export function portFromRow(
  row: Pick<PortRow, 'port' | 'protocol' | 'state' | 'service' | 'product' | 'version' | 'extra_info' | 'cpe'>,
): ScannedPort {
  return {
    port: row.port,
    protocol: row.protocol === 'udp' ? 'udp' : 'tcp',
    state: row.state,
    service: row.service,
    product: row.product,
    version: row.version,
    extra_info: row.extra_info,
    cpe: JSON.parse(row.cpe) as string[],
  };
}

/** The stored columns of a scanned port (without its device and sighting times). */
export function portColumns(port: ScannedPort) {
  return {
    port: port.port,
    protocol: port.protocol,
    state: port.state,
    service: port.service,
    product: port.product,
    version: port.version,
    extra_info: port.extra_info,
    cpe: JSON.stringify(port.cpe),
  };
}
