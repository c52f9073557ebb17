/**
 * The frames of a zstd stream, walked as it arrives, so that the JavaScript decoder (fzstd, which
 * does not verify the content checksum) decodes one frame at a time and each frame's output is
 * checked against the XXH64 checksum the frame ends with (RFC 8878 §3.1.1: the low 32 bits of
 * XXH64 with seed 0 of the frame's decompressed content, present when the frame header's
 * Content_Checksum_flag is set). Skippable frames are skipped; bytes that are neither a frame nor
 * a skippable frame, and a stream that ends inside a frame, are errors.
 * @module
 */
import { Xxh64 } from './xxh64.js';

const MAGIC = 0;
const HEADER = 1;
const HEADER_REST = 2;
const BLOCK_HEADER = 3;
const BLOCK_BODY = 4;
const CHECKSUM = 5;
const SKIP_SIZE = 6;
const SKIP = 7;

/**
 * What a {@link ZstdFrameWalker} hands on: the bytes of the current frame in order (from its magic
 * number to its checksum), `end` true with the frame's last bytes, and then `checksum` (the frame's
 * 32-bit checksum, or undefined when it has none).
 */
export type FrameBytes = (bytes: Uint8Array, end: boolean, checksum: number | undefined) => void;

/** Walks a zstd stream's frame and block headers, handing each frame's bytes to `each`. */
export class ZstdFrameWalker {
  private state = MAGIC;
  /** Header bytes being collected, how many are needed, and how many are in. */
  private readonly hdr = new Uint8Array(8);
  private need = 4;
  private got = 0;
  /** Bytes left to pass (a block body, the rest of a frame header) or to skip. */
  private left = 0;
  private hasChecksum = false;
  private lastBlock = false;
  /** Bytes of the stream walked so far (for messages). */
  private offset = 0;

  constructor(private readonly each: FrameBytes) {}

  /** Walks the next bytes of the stream. */
  push(chunk: Uint8Array): void {
    let pos = 0;
    /** Start of the current frame's bytes in `chunk` not yet handed on (−1: not in a frame). */
    let seg = this.state === MAGIC || this.state === SKIP_SIZE || this.state === SKIP ? -1 : 0;
    const n = chunk.length;
    for (;;) {
      // Bytes passed on or skipped (also none: an empty block ends here, not at the next byte).
      if (this.state === BLOCK_BODY || this.state === HEADER_REST || this.state === SKIP) {
        const k = Math.min(this.left, n - pos);
        pos += k;
        this.left -= k;
        if (this.left > 0) break;
        if (this.state === SKIP) {
          this.expect(MAGIC, 4);
          continue;
        }
        if (this.state === HEADER_REST) this.expect(BLOCK_HEADER, 3);
        else if (!this.lastBlock) this.expect(BLOCK_HEADER, 3);
        else if (this.hasChecksum) this.expect(CHECKSUM, 4);
        else {
          this.each(chunk.subarray(seg, pos), true, undefined);
          seg = -1;
          this.expect(MAGIC, 4);
        }
        continue;
      }
      if (pos >= n) break;
      this.hdr[this.got++] = chunk[pos++]!;
      if (this.got < this.need) continue;
      const h = this.hdr;
      switch (this.state) {
        case MAGIC: {
          const at = this.offset + pos - 4;
          if (h[0] === 0x28 && h[1] === 0xb5 && h[2] === 0x2f && h[3] === 0xfd) {
            this.each(h.slice(0, 4), false, undefined);
            seg = pos;
            this.expect(HEADER, 1);
          } else if ((h[0]! & 0xf0) === 0x50 && h[1] === 0x2a && h[2] === 0x4d && h[3] === 0x18) this.expect(SKIP_SIZE, 4);
          else throw new Error(`unknown frame at byte ${at} (not a zstd frame)`);
          break;
        }
        case HEADER: {
          const fhd = h[0]!;
          const single = (fhd & 0x20) !== 0;
          const fcs = fhd >> 6;
          this.hasChecksum = (fhd & 0x04) !== 0;
          this.left = (single ? 0 : 1) + [0, 1, 2, 4][fhd & 3]! + (fcs === 0 ? (single ? 1 : 0) : [0, 2, 4, 8][fcs]!);
          this.state = HEADER_REST;
          break;
        }
        case BLOCK_HEADER: {
          const v = h[0]! | (h[1]! << 8) | (h[2]! << 16);
          const type = (v >> 1) & 3;
          if (type === 3) throw new Error(`corrupted block header at byte ${this.offset + pos - 3} (reserved block type)`);
          this.lastBlock = (v & 1) !== 0;
          this.left = type === 1 ? 1 : v >>> 3;
          this.state = BLOCK_BODY;
          break;
        }
        case CHECKSUM:
          this.each(chunk.subarray(seg, pos), true, (h[0]! | (h[1]! << 8) | (h[2]! << 16) | (h[3]! << 24)) >>> 0);
          seg = -1;
          this.expect(MAGIC, 4);
          break;
        case SKIP_SIZE:
          this.left = (h[0]! | (h[1]! << 8) | (h[2]! << 16) | (h[3]! << 24)) >>> 0;
          this.state = SKIP;
          break;
      }
      this.got = 0;
      if (this.state === MAGIC || this.state === SKIP) seg = -1;
    }
    if (seg >= 0 && pos > seg) this.each(chunk.subarray(seg, pos), false, undefined);
    this.offset += n;
  }

  /** The end of the stream: an error when it ends inside a frame. */
  finish(): void {
    if (this.state !== MAGIC || this.got !== 0) throw new Error(`unexpected end of file (the input ends inside a zstd frame, after ${this.offset} bytes)`);
  }

  private expect(state: number, need: number): void {
    this.state = state;
    this.need = need;
    this.got = 0;
    this.left = 0;
  }
}

/** A frame's decoded content hashed as it comes, and checked against the frame's checksum. */
export class FrameChecksum {
  private hash = new Xxh64();
  private frame = 0;

  /** Hashes decoded bytes of the current frame. */
  update(data: Uint8Array): void {
    this.hash.update(data);
  }

  /** The current frame ended: throws when its content does not match `checksum` (if it has one). */
  end(checksum: number | undefined): void {
    this.frame++;
    if (checksum !== undefined) {
      const got = Number(this.hash.digest() & 0xffffffffn);
      if (got !== checksum) throw new Error(`restored data doesn't match checksum (frame ${this.frame})`);
    }
    this.hash = new Xxh64();
  }
}
