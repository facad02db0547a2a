package io.symmem.nativ;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The device code a shared library carries: the entries of its ELF section .nv_fatbin, each PTX
 * or machine code (a cubin) for one GPU architecture. What cuobjdump --list-elf --list-ptx lists,
 * read without the CUDA toolkit (this machine's nvcc comes without cuobjdump).
 *
 * <p>The section holds one fat binary per translation unit: a 16-byte header (magic 0xBA55ED50,
 * version, header size, size of the entries) followed by entries, each with its own header (kind:
 * 1 PTX, 2 cubin; header size; payload size; the architecture as major x 10 + minor at byte 28)
 * and payload. An uncompressed cubin is an ELF file whose e_flags carry the architecture again
 * (bits 8 to 15): {@link #crossChecked} counts the entries where both agree, so a misread header
 * cannot pass unnoticed.
 */
final class CudaFatbin {
    static final int PTX = 1;
    static final int CUBIN = 2;
    private static final int MAGIC = 0xBA55ED50;

    record Entry(int kind, int arch, boolean elfAgrees) {
    }

    private final List<Entry> entries;

    private CudaFatbin(List<Entry> entries) {
        this.entries = entries;
    }

    List<Entry> entries() {
        return entries;
    }

    long crossChecked() {
        return entries.stream().filter(Entry::elfAgrees).count();
    }

    /** Empty when the library has no .nv_fatbin (built without nvcc). */
    static Optional<CudaFatbin> of(Path library) throws IOException {
        ByteBuffer elf = ByteBuffer.wrap(Files.readAllBytes(library)).order(ByteOrder.LITTLE_ENDIAN);
        return section(elf, ".nv_fatbin").map(CudaFatbin::parse);
    }

    private static CudaFatbin parse(ByteBuffer section) {
        List<Entry> entries = new ArrayList<>();
        int offset = 0;
        while (offset + 16 <= section.limit()) {
            if (section.getInt(offset) != MAGIC) {
                // Fat binaries are aligned: skip the padding between them.
                offset = (offset & ~7) + 8;
                continue;
            }
            int headerSize = Short.toUnsignedInt(section.getShort(offset + 6));
            long size = section.getLong(offset + 8);
            int entry = offset + headerSize;
            int end = Math.toIntExact(offset + headerSize + size);
            while (entry < end) {
                int kind = Short.toUnsignedInt(section.getShort(entry));
                int entryHeader = section.getInt(entry + 4);
                long payload = section.getLong(entry + 8);
                int arch = section.getInt(entry + 28);
                int start = entry + entryHeader;
                boolean agrees = kind == CUBIN && start + 52 <= section.limit() && section.getInt(start) == 0x464C457F
                        && ((section.getInt(start + 48) >>> 8) & 0xff) == arch;
                entries.add(new Entry(kind, arch, agrees));
                entry = Math.toIntExact(start + payload);
            }
            offset = end;
        }
        return new CudaFatbin(entries);
    }

    /** The named section of a 64-bit little-endian ELF file, or empty. */
    private static Optional<ByteBuffer> section(ByteBuffer elf, String name) {
        if (elf.getInt(0) != 0x464C457F || elf.get(4) != 2) {
            throw new IllegalArgumentException("not a 64-bit ELF file");
        }
        long sectionHeaders = elf.getLong(0x28);
        int entrySize = Short.toUnsignedInt(elf.getShort(0x3A));
        int count = Short.toUnsignedInt(elf.getShort(0x3C));
        int namesIndex = Short.toUnsignedInt(elf.getShort(0x3E));
        long namesOffset = elf.getLong(Math.toIntExact(sectionHeaders + (long) namesIndex * entrySize + 0x18));
        for (int i = 0; i < count; i++) {
            int header = Math.toIntExact(sectionHeaders + (long) i * entrySize);
            String sectionName = cString(elf, Math.toIntExact(namesOffset + Integer.toUnsignedLong(elf.getInt(header))));
            if (sectionName.equals(name)) {
                int offset = Math.toIntExact(elf.getLong(header + 0x18));
                int size = Math.toIntExact(elf.getLong(header + 0x20));
                return Optional.of(elf.duplicate().position(offset).limit(offset + size).slice().order(ByteOrder.LITTLE_ENDIAN));
            }
        }
        return Optional.empty();
    }

    private static String cString(ByteBuffer buffer, int offset) {
        int end = offset;
        while (buffer.get(end) != 0) {
            end++;
        }
        byte[] bytes = new byte[end - offset];
        buffer.get(offset, bytes);
        return new String(bytes, StandardCharsets.US_ASCII);
    }
}
