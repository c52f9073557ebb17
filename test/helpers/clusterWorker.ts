/**
 * Test helper process: opens the index on the store given as argv[2] and runs one JSON command per
 * stdin line ({op: 'add'|'remove'|'clusters', id?, text?}), answering one JSON line each. The
 * two-process cluster test drives it next to an index in the test process on the same store.
 */
import { createInterface } from 'node:readline';
import { NearDupIndex } from '../../src/index.js';
import { CLUSTER_OPTS } from './clusterModel.js';

const index = await NearDupIndex.open({ ...CLUSTER_OPTS, store: process.argv[2]! });
for await (const line of createInterface({ input: process.stdin })) {
  const c = JSON.parse(line) as { op: string; id?: string; text?: string };
  let out: unknown;
  if (c.op === 'add') out = (await index.add(c.id!, c.text!)).map((m) => m.id);
  else if (c.op === 'remove') out = await index.remove(c.id!);
  else out = (await index.clusters({ limit: 1000, members: 1000 })).clusters.map((x) => x.members);
  process.stdout.write(JSON.stringify(out) + '\n');
}
await index.close();
