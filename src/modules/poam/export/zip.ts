import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * The little of ZIP an .xlsx needs: read the entries of an archive, and write an archive in which
 * unchanged entries are copied as they were (compressed bytes and CRC) and changed ones deflated
 * again. No ZIP64, no encryption, no data descriptors on write: Office files need none of them.
 */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  crc32: number;
  compressed: Buffer;
  size: number;
  /** DOS time and date of the entry, kept as they were. */
  time: number;
  date: number;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function readZip(archive: Buffer): ZipEntry[] {
  // End of central directory: the last signature 0x06054b50 (a comment may follow it).
  let eocd = -1;
  for (let i = archive.length - 22; i >= Math.max(0, archive.length - 22 - 0xffff); i--) {
    if (archive.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a ZIP archive');
  const count = archive.readUInt16LE(eocd + 10);
  let offset = archive.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (archive.readUInt32LE(offset) !== 0x02014b50) throw new Error('broken ZIP central directory');
    const method = archive.readUInt16LE(offset + 10);
    const time = archive.readUInt16LE(offset + 12);
    const date = archive.readUInt16LE(offset + 14);
    const crc = archive.readUInt32LE(offset + 16);
    const compressedSize = archive.readUInt32LE(offset + 20);
    const size = archive.readUInt32LE(offset + 24);
    const nameLength = archive.readUInt16LE(offset + 28);
    const extraLength = archive.readUInt16LE(offset + 30);
    const commentLength = archive.readUInt16LE(offset + 32);
    const local = archive.readUInt32LE(offset + 42);
    const name = archive.subarray(offset + 46, offset + 46 + nameLength).toString('utf8');
    if (archive.readUInt32LE(local) !== 0x04034b50) throw new Error(`broken ZIP entry ${name}`);
    const dataStart = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    entries.push({ name, method, crc32: crc, compressed: archive.subarray(dataStart, dataStart + compressedSize), size, time, date });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

export function entryData(entry: ZipEntry): Buffer {
  if (entry.method === 0) return entry.compressed;
  if (entry.method === 8) return inflateRawSync(entry.compressed);
  throw new Error(`ZIP entry ${entry.name}: compression method ${entry.method} not supported`);
}

/** A new entry (or a replacement) with this content, deflated. */
export function deflatedEntry(template: Pick<ZipEntry, 'name' | 'time' | 'date'>, data: Buffer): ZipEntry {
  return { name: template.name, method: 8, crc32: crc32(data), compressed: deflateRawSync(data, { level: 6 }), size: data.length, time: template.time, date: template.date };
}

export function writeZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(0x0800, 6); // UTF-8 names
    header.writeUInt16LE(e.method, 8);
    header.writeUInt16LE(e.time, 10);
    header.writeUInt16LE(e.date, 12);
    header.writeUInt32LE(e.crc32, 14);
    header.writeUInt32LE(e.compressed.length, 18);
    header.writeUInt32LE(e.size, 22);
    header.writeUInt16LE(name.length, 26);
    header.writeUInt16LE(0, 28);
    locals.push(header, name, e.compressed);
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt16LE(0x0800, 8);
    record.writeUInt16LE(e.method, 10);
    record.writeUInt16LE(e.time, 12);
    record.writeUInt16LE(e.date, 14);
    record.writeUInt32LE(e.crc32, 16);
    record.writeUInt32LE(e.compressed.length, 20);
    record.writeUInt32LE(e.size, 24);
    record.writeUInt16LE(name.length, 28);
    record.writeUInt32LE(offset, 42);
    central.push(record, name);
    offset += 30 + name.length + e.compressed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
