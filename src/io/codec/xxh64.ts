/**
 * XXH64, streaming, in WebAssembly (64-bit multiplies and rotates are native there; BigInt in
 * JavaScript would be several times slower than the decoder it checks). zstd frames end with its
 * low 32 bits when their checksum flag is set. The module is src/io/codec/xxh64.wat, compiled.
 * @module
 */

/** src/io/codec/xxh64.wat compiled by wabt (691 bytes). */
export const XXH64_WASM_BASE64 =
  'AGFzbQEAAAABFwRgAn5+AX5gAX4AYAJ/fwBgA39/fgF+AwYFAAABAgMFAwEAAQYaBX4BQgALfgFCAAt+AUIAC34BQgALfgFCAAsHJAQGbWVtb3J5AgAFcmVzZXQAAgZ1cGRhdGUAAwZkaWdlc3QABArABAUhACAAIAFCz9bTvtLHq9lCfnxCH4lCh5Wvr5i23puef34LIwAgAEIAIAEQAIVCh5Wvr5i23puef35C49zKlfzO8vWFf3wLRAAgACQEIABCh5Wvr5i23puef3xCz9bTvtLHq9lCfCQAIABCz9bTvtLHq9lCfCQBIAAkAiAAQoeVr6+Ytt6bnn99JAMLTQEBfyAAIAFqIQICQANAIAAgAk8NASMAIAApAwAQACQAIwEgACkDCBAAJAEjAiAAKQMQEAAkAiMDIAApAxgQACQDIABBIGohAAwACwsL5AIBAX4gAkIgWgRAIwBCAYkjAUIHiXwjAkIMiSMDQhKJfHwhAyADIwAQASEDIAMjARABIQMgAyMCEAEhAyADIwMQASEDBSMEQsXP2bLx5brqJ3whAwsgAyACfCEDAkADQCABQQhJDQEgA0IAIAApAwAQAIUhAyADQhuJQoeVr6+Ytt6bnn9+QuPcypX8zvL1hX98IQMgAEEIaiEAIAFBCGshAQwACwsgAUEETwRAIAMgADUCAEKHla+vmLbem55/foUhAyADQheJQs/W077Sx6vZQn5C+fPd8Zn2masWfCEDIABBBGohACABQQRrIQELAkADQCABRQ0BIAMgADEAAELFz9my8eW66id+hSEDIANCC4lCh5Wvr5i23puef34hAyAAQQFqIQAgAUEBayEBDAALCyADIANCIYiFQs/W077Sx6vZQn4hAyADIANCHYiFQvnz3fGZ9pmrFn4hAyADIANCIIiFCw==';

interface Exports {
  memory: WebAssembly.Memory;
  reset(seed: bigint): void;
  update(p: number, n: number): void;
  digest(p: number, n: number, total: bigint): bigint;
}

let mod: WebAssembly.Module | undefined;

/** Bytes hashed per call: one page of the module's memory. */
const PIECE = 65536;

/** An XXH64 hash state: {@link Xxh64.update} with bytes, then {@link Xxh64.digest}. */
export class Xxh64 {
  private readonly ex: Exports;
  private readonly mem: Uint8Array;
  private readonly tail = new Uint8Array(32);
  private tailLen = 0;
  private total = 0;

  constructor(seed = 0n) {
    mod ??= new WebAssembly.Module(Buffer.from(XXH64_WASM_BASE64, 'base64'));
    this.ex = new WebAssembly.Instance(mod).exports as unknown as Exports;
    this.mem = new Uint8Array(this.ex.memory.buffer);
    this.ex.reset(seed);
  }

  /** Adds `data` to the hashed bytes. */
  update(data: Uint8Array): void {
    this.total += data.length;
    let off = 0;
    if (this.tailLen > 0) {
      const take = Math.min(32 - this.tailLen, data.length);
      this.tail.set(data.subarray(0, take), this.tailLen);
      this.tailLen += take;
      off = take;
      if (this.tailLen < 32) return;
      this.mem.set(this.tail, 0);
      this.ex.update(0, 32);
      this.tailLen = 0;
    }
    while (data.length - off >= 32) {
      const n = Math.min(PIECE, (data.length - off) & ~31);
      this.mem.set(data.subarray(off, off + n), 0);
      this.ex.update(0, n);
      off += n;
    }
    this.tail.set(data.subarray(off), 0);
    this.tailLen = data.length - off;
  }

  /** The hash of every byte given so far (unsigned). */
  digest(): bigint {
    this.mem.set(this.tail.subarray(0, this.tailLen), 0);
    return BigInt.asUintN(64, this.ex.digest(0, this.tailLen, BigInt(this.total)));
  }
}
