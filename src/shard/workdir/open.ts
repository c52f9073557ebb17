/**
 * The one place that picks a job's work dir for a `--work-dir` value: a prefix in object storage,
 * or a directory.
 * @module
 */
import path from 'node:path';
import { isS3Url } from '../../io/s3/client.js';
import { PosixWorkDir } from './posix.js';
import { S3WorkDir } from './s3work.js';
import type { WorkDir } from './workDir.js';

/** The work dir a `--work-dir` value names: `s3://bucket/prefix`, or a directory (made absolute). */
export function openWorkDir(name: string): WorkDir {
  return isS3Url(name) ? new S3WorkDir(name) : new PosixWorkDir(path.resolve(name));
}
