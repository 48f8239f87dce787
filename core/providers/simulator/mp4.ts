// A minimal well-formed MP4 made in code, for the simulator's videos and the
// test fakes: ftyp (isom), moov with an mvhd of the given length, and an mdat
// holding the given payload. It has no tracks, so a player shows nothing, but
// every box parses.

export interface Mp4Options {
  /** The movie's length in whole seconds (mvhd, timescale 1000); default 1. */
  seconds?: number;
  /** The mdat box's bytes; default none. */
  payload?: Buffer;
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const size = Buffer.alloc(4);
  size.writeUInt32BE(8 + body.length);
  return Buffer.concat([size, Buffer.from(type, "ascii"), body]);
}

function uint32s(...values: number[]): Buffer {
  const buffer = Buffer.alloc(4 * values.length);
  values.forEach((value, index) => buffer.writeUInt32BE(value >>> 0, 4 * index));
  return buffer;
}

export function tinyMp4({ seconds = 1, payload = Buffer.alloc(0) }: Mp4Options = {}): Buffer {
  const ftyp = box("ftyp", Buffer.from("isom", "ascii"), uint32s(0x200), Buffer.from("isomiso2mp41", "ascii"));
  const mvhd = box(
    "mvhd",
    uint32s(0, 0, 0, 1000, seconds * 1000), // version+flags, creation, modification, timescale 1000, duration
    uint32s(0x00010000), // rate 1.0
    Buffer.from([0x01, 0x00]), // volume 1.0
    Buffer.alloc(10), // reserved
    uint32s(0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000), // unity matrix
    Buffer.alloc(24), // pre_defined
    uint32s(1), // next track id
  );
  return Buffer.concat([ftyp, box("moov", mvhd), box("mdat", payload)]);
}
