/**
 * Test helper: a one-machine Slurm cluster (munged, slurmctld, slurmd from Debian's slurm-wlm and
 * munge) with all its state, sockets and logs in a temp directory, on free loopback ports, so it
 * disturbs nothing else on the machine. Plugins that need cgroups or accounting are off
 * (proctrack/linuxproc, task/none, jobacct_gather/none): a container has no delegated cgroup tree.
 * The daemons run as the current user (root in CI containers), which Slurm allows as SlurmUser.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { leashed } from './leash.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './redis.js';

const PROGRAMS = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'scontrol'];

function which(p: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/sbin']) {
    if (dir && fs.existsSync(path.join(dir, p))) return path.join(dir, p);
  }
  return undefined;
}

/** Why a Slurm cluster cannot be started here, or undefined. */
export function slurmMissing(): string | undefined {
  const absent = PROGRAMS.filter((p) => !which(p));
  if (absent.length) return `needs ${absent.join(', ')}, not found; install: apt-get install -y slurm-wlm munge`;
  return undefined;
}

/** A running one-machine cluster. */
export interface SlurmCluster {
  /** Environment for the client commands (SLURM_CONF) and for jobs. */
  env: Record<string, string>;
  /** The temp directory with the config, state and logs. */
  dir: string;
  /** Runs a Slurm client command, returning stdout (throws on failure with stderr). */
  run(cmd: string, args: string[]): string;
  /** Resolves once no job of the cluster is pending or running. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean, log: () => string, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what}: gave up\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts munged, slurmctld and slurmd with a generated slurm.conf (2 CPUs, one partition). */
export async function startSlurm(): Promise<SlurmCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-slurm-'));
  fs.chmodSync(dir, 0o755);
  for (const d of ['state', 'spool', 'munge', 'log']) fs.mkdirSync(path.join(dir, d), { mode: 0o700 });
  fs.chmodSync(path.join(dir, 'munge'), 0o700);
  const key = path.join(dir, 'munge', 'munge.key');
  fs.writeFileSync(key, Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 131 + 7) & 0xff)), { mode: 0o400 });
  const socket = path.join(dir, 'munge', 'munge.socket');
  const children: ChildProcess[] = [];
  const munged = spawnSync(which('munged')!, [
    '--force',
    `--socket=${socket}`,
    `--key-file=${key}`,
    `--pid-file=${path.join(dir, 'munge', 'munged.pid')}`,
    `--log-file=${path.join(dir, 'log', 'munged.log')}`,
    `--seed-file=${path.join(dir, 'munge', 'seed')}`,
  ], { encoding: 'utf8' });
  if (munged.status !== 0) throw new Error(`munged failed: ${munged.stderr}`);
  const host = os.hostname();
  const [ctld, slurmd] = [await freePort(), await freePort()];
  const conf = path.join(dir, 'slurm.conf');
  const user = os.userInfo().username;
  fs.writeFileSync(
    conf,
    [
      'ClusterName=neardup-test',
      `SlurmctldHost=${host}(127.0.0.1)`,
      `SlurmctldPort=${ctld}`,
      `SlurmdPort=${slurmd}`,
      `SlurmUser=${user}`,
      `SlurmdUser=${user}`,
      'AuthType=auth/munge',
      'CredType=cred/munge',
      `AuthInfo=socket=${socket}`,
      `StateSaveLocation=${path.join(dir, 'state')}`,
      `SlurmdSpoolDir=${path.join(dir, 'spool')}`,
      `SlurmctldPidFile=${path.join(dir, 'slurmctld.pid')}`,
      `SlurmdPidFile=${path.join(dir, 'slurmd.pid')}`,
      `SlurmctldLogFile=${path.join(dir, 'log', 'slurmctld.log')}`,
      `SlurmdLogFile=${path.join(dir, 'log', 'slurmd.log')}`,
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'SwitchType=switch/none',
      'MpiDefault=none',
      'SchedulerType=sched/backfill',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'ReturnToService=2',
      // Dependants of a cancelled job are removed instead of waiting forever.
      'DependencyParameters=kill_invalid_depend',
      'SchedulerParameters=sched_interval=1',
      'MinJobAge=2',
      `NodeName=${host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN`,
      'PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n'),
  );
  const env = { SLURM_CONF: conf };
  const daemon = (prog: string, args: string[]): void => {
    const c = spawn(...leashed(which(prog)!, ['-D', '-f', conf, ...args]), { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    c.on('exit', (code) => code && process.stderr.write(`${prog} exited ${code}: ${err}\n`));
    children.push(c);
  };
  const log = (): string =>
    ['slurmctld.log', 'slurmd.log', 'munged.log'].map((f) => `--- ${f}\n${fs.readFileSync(path.join(dir, 'log', f), 'utf8').slice(-3000)}`).join('\n');
  const run = (cmd: string, args: string[]): string => {
    const r = spawnSync(which(cmd)!, args, { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  daemon('slurmctld', ['-i']);
  daemon('slurmd', []);
  await until('the node comes up idle', () => {
    const r = spawnSync(which('sinfo')!, ['-h', '-o', '%t'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    return r.status === 0 && r.stdout.trim() === 'idle';
  }, log);
  return {
    env,
    dir,
    run,
    idle: () => until('jobs finish', () => run('squeue', ['-h', '-o', '%i']).trim() === '', log, 300_000),
    async stop() {
      for (const c of children) {
        c.kill('SIGTERM');
        if (c.exitCode === null) await new Promise((r) => c.once('exit', r));
      }
      const pid = Number(fs.readFileSync(path.join(dir, 'munge', 'munged.pid'), 'utf8'));
      if (pid) {
        process.kill(pid, 'SIGTERM');
        // munged writes its seed file as it exits: removing the directory before then raced it (ENOTEMPTY).
        await until('munged exits', () => !alive(pid), () => '', 10_000).catch(() => undefined);
      }
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}
