import { describe, expect, it } from 'vitest';
import { startableScans, triggerConflict, type ActiveScan } from '../../src/core/scan-queue.js';

const net = (third: number) => ({ low: (10 << 24) + third * 256, high: (10 << 24) + third * 256 + 255 });
const running = (id: number, third: number, slot: number, agentId: number | null = null): ActiveScan => ({
  id,
  status: 'running',
  ...net(third),
  agentId,
  slot,
});
const queued = (id: number, third: number, agentId: number | null = null): ActiveScan => ({
  id,
  status: 'queued',
  ...net(third),
  agentId,
  slot: null,
});

describe('scan queue rules', () => {
  it('refuses a trigger whose target overlaps a queued or running scan, naming it', () => {
    expect(triggerConflict([running(1, 1, 1)], 4, net(1))?.id).toBe(1);
    expect(triggerConflict([running(1, 1, 1), queued(2, 2)], 4, { low: net(2).low + 5, high: net(2).low + 5 })?.id).toBe(2);
    expect(triggerConflict([running(1, 1, 1), queued(2, 2)], 4, net(3))).toBeNull();
  });

  it('refuses a trigger once every slot is taken or promised, naming the running scan first', () => {
    expect(triggerConflict([queued(1, 1)], 1, net(2))?.id).toBe(1);
    expect(triggerConflict([queued(1, 1), running(2, 2, 1)], 2, net(3))?.id).toBe(2);
    expect(triggerConflict([], 1, net(2))).toBeNull();
  });

  it('starts queued scans oldest first, one per free slot', () => {
    expect(startableScans([queued(3, 3), queued(2, 2), running(1, 1, 2)], 3, null)).toEqual([
      { id: 2, slot: 1 },
      { id: 3, slot: 3 },
    ]);
    expect(startableScans([queued(2, 2), running(1, 1, 1)], 1, null)).toEqual([]);
  });

  it('passes over a scan whose target is busy, and keeps younger scans of that target behind it', () => {
    const active = [running(1, 1, 1), queued(2, 1), queued(3, 3), queued(4, 1)];
    expect(startableScans(active, 4, null)).toEqual([{ id: 3, slot: 2 }]);
  });

  it("gives each lane only its own scans, while another lane's older scan still holds its target", () => {
    const active = [queued(2, 5, 7), queued(3, 5), queued(4, 6)];
    expect(startableScans(active, 4, null)).toEqual([{ id: 4, slot: 1 }]);
    expect(startableScans(active, 4, 7)).toEqual([{ id: 2, slot: 1 }]);
  });
});
