//! The kernel's own ELF image for QEMU's direct (PVH) boot. A bzImage
//! carries the kernel compressed behind a real-mode setup stub; booting
//! it, the guest decompresses and relocates some 50 MB under emulation
//! first (a median 0.14 s of a TCG boot here, docs/bisect.md). The payload is
//! unpacked once on the host into vmscale's cache, keyed by the image's
//! hash; a kernel whose ELF image has a PVH entry (a Xen note
//! `PHYS32_ENTRY`, `CONFIG_PVH`) is then loaded by QEMU as it stands and
//! entered there. The kernel is the same; what differs is that the
//! decompressor's KASLR does not run, so the kernel sits at its link
//! address in every boot. A kernel without the entry, or compressed in a
//! way not read here, boots as a bzImage.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cache::lock;
use crate::error::{Error, Result};

/// The setup header's offsets (Documentation/arch/x86/boot.rst).
const SETUP_SECTS_AT: usize = 0x1f1;
const VERSION_AT: usize = 0x206;
const PAYLOAD_OFFSET_AT: usize = 0x248;
const PAYLOAD_LENGTH_AT: usize = 0x24c;
/// Boot protocol 2.08 added the payload's offset and length.
const PAYLOAD_PROTOCOL: u16 = 0x208;

/// A Xen ELF note naming the 32-bit PVH entry point.
const XEN_ELFNOTE_PHYS32_ENTRY: u32 = 18;

/// A payload that claims more than this is not a kernel.
const MAX_IMAGE: u32 = 1 << 30;

/// Why a kernel boots as a bzImage instead of at its PVH entry.
#[derive(Debug, thiserror::Error)]
pub enum NoPvh {
    #[error(
        "its boot protocol {}.{:02} names no payload (2.08 and later do)",
        .0 >> 8,
        .0 & 0xff
    )]
    OldProtocol(u16),
    #[error("its payload lies outside the file")]
    PayloadOutside,
    #[error(
        "its payload is compressed in a way vmscale does not read \
         (starts {0}; gzip, xz, zstd and lz4 are read)"
    )]
    UnknownFormat(String),
    #[error("its payload claims {0} bytes decompressed")]
    TooBig(u32),
    #[error("its {format:?} payload does not decompress: {source}")]
    Corrupt {
        format: Format,
        source: std::io::Error,
    },
    #[error("its payload decompressed to {got} bytes, not the {size} it names")]
    WrongSize { got: usize, size: u32 },
    #[error("its payload is not an ELF image ({0})")]
    NotElf(object::read::Error),
    #[error("its kernel has no PVH entry (built without CONFIG_PVH)")]
    NoEntry,
}

/// How the kernel's payload is compressed (`CONFIG_KERNEL_*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    Gzip,
    Xz,
    Zstd,
    /// lz4's legacy frame, as `lz4 -l` writes it (Debian's 6.1 kernels).
    Lz4Legacy,
}

impl Format {
    fn of(payload: &[u8]) -> Result<Format, NoPvh> {
        const FORMATS: [(&[u8], Format); 4] = [
            (&[0x1f, 0x8b], Format::Gzip),
            (&[0xfd, b'7', b'z', b'X', b'Z', 0], Format::Xz),
            (&[0x28, 0xb5, 0x2f, 0xfd], Format::Zstd),
            (&[0x02, 0x21, 0x4c, 0x18], Format::Lz4Legacy),
        ];
        FORMATS
            .iter()
            .find(|(magic, _)| payload.starts_with(magic))
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                let head: Vec<String> =
                    payload.iter().take(4).map(|b| format!("{b:02x}")).collect();
                NoPvh::UnknownFormat(head.join(" "))
            })
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The compressed kernel in a bzImage: the payload the setup header
/// points at.
fn payload(image: &[u8]) -> Result<&[u8], NoPvh> {
    let version = u16_at(image, VERSION_AT).unwrap_or(0);
    if version < PAYLOAD_PROTOCOL {
        return Err(NoPvh::OldProtocol(version));
    }
    let sects = match image.get(SETUP_SECTS_AT) {
        Some(0) | None => 4,
        Some(n) => *n as usize,
    };
    let offset = u32_at(image, PAYLOAD_OFFSET_AT).unwrap_or(0) as usize;
    let length = u32_at(image, PAYLOAD_LENGTH_AT).unwrap_or(0) as usize;
    let start = (sects + 1) * 512 + offset;
    image
        .get(start..start.saturating_add(length))
        .filter(|p| p.len() > 4)
        .ok_or(NoPvh::PayloadOutside)
}

/// Decompresses a payload: the kernel's build appends the decompressed
/// size as four little-endian bytes (gzip's own trailer ends so too),
/// and the result must have exactly that size.
fn decompress(payload: &[u8]) -> Result<Vec<u8>, NoPvh> {
    let format = Format::of(payload)?;
    let (stream, size) = payload.split_at(payload.len() - 4);
    let size = u32::from_le_bytes(size.try_into().map_err(|_| NoPvh::PayloadOutside)?);
    if size > MAX_IMAGE {
        return Err(NoPvh::TooBig(size));
    }
    let limit = u64::from(size) + 1;
    let mut out = Vec::with_capacity(size as usize);
    let read = match format {
        Format::Gzip => flate2::read::GzDecoder::new(payload)
            .take(limit)
            .read_to_end(&mut out)
            .map(|_| ()),
        Format::Xz => liblzma::read::XzDecoder::new(stream)
            .take(limit)
            .read_to_end(&mut out)
            .map(|_| ()),
        Format::Zstd => ruzstd::decoding::StreamingDecoder::new(stream)
            .map_err(std::io::Error::other)
            .and_then(|d| d.take(limit).read_to_end(&mut out).map(|_| ())),
        Format::Lz4Legacy => lz4_legacy(stream, size as usize, &mut out),
    };
    read.map_err(|source| NoPvh::Corrupt { format, source })?;
    if out.len() != size as usize {
        return Err(NoPvh::WrongSize {
            got: out.len(),
            size,
        });
    }
    Ok(out)
}

/// lz4's legacy frame: a magic, then blocks of a little-endian length and
/// an lz4 block of at most 8 MiB decompressed; the magic may recur.
fn lz4_legacy(mut input: &[u8], size: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
    const MAGIC: u32 = 0x184c_2102;
    const BLOCK: usize = 8 << 20;
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    while input.len() >= 4 {
        let word = u32::from_le_bytes(input[..4].try_into().expect("four bytes"));
        input = &input[4..];
        if word == MAGIC {
            continue;
        }
        let block = input
            .get(..word as usize)
            .ok_or_else(|| bad("a block past the end"))?;
        input = &input[word as usize..];
        let at = out.len();
        let room = BLOCK.min(size.saturating_sub(at));
        out.resize(at + room, 0);
        let n = lz4_flex::block::decompress_into(block, &mut out[at..])
            .map_err(|e| bad(&e.to_string()))?;
        out.truncate(at + n);
    }
    Ok(())
}

/// Whether an ELF image has a PVH entry QEMU can enter.
fn pvh_entry(elf: &[u8]) -> Result<(), NoPvh> {
    use object::read::elf::{ElfFile64, ProgramHeader};
    let file = ElfFile64::<object::Endianness>::parse(elf).map_err(NoPvh::NotElf)?;
    let endian = file.endian();
    for ph in file.elf_program_headers() {
        let Ok(Some(mut notes)) = ph.notes(endian, elf) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.name() == b"Xen" && note.n_type(endian) == XEN_ELFNOTE_PHYS32_ENTRY {
                return Ok(());
            }
        }
    }
    Err(NoPvh::NoEntry)
}

/// The ELF image of `image` (whose SHA-256 is `sha256`) for a PVH boot,
/// from the cache or unpacked into it; `Err` says why the kernel boots as
/// a bzImage instead.
pub fn image(image: &Path, sha256: &str) -> Result<Result<PathBuf, NoPvh>> {
    let dir = crate::cache::cache_dir().join("pvh");
    let cached = dir.join(format!("vmlinux-{sha256}"));
    if cached.is_file() && lock::hold(&cached)? {
        return Ok(Ok(cached));
    }
    let bytes = std::fs::read(image).map_err(|e| Error::io("cannot read", image, e))?;
    let elf = match payload(&bytes).and_then(decompress) {
        Ok(elf) => elf,
        Err(why) => return Ok(Err(why)),
    };
    if let Err(why) = pvh_entry(&elf) {
        return Ok(Err(why));
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    // Held while this run lives; written again should a prune take it
    // between the write and the lock.
    for _ in 0..3 {
        crate::atomic_file::write(&cached, &elf, 0o644)?;
        if lock::hold(&cached)? {
            crate::cache::prune::to_cap();
            return Ok(Ok(cached));
        }
    }
    Err(lock::vanished(&cached))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A minimal ELF64 x86-64 image with one PT_NOTE segment holding
    /// `notes` (name, type) and some text after it.
    fn elf(notes: &[(&[u8], u32)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, kind) in notes {
            let namesz = name.len() as u32 + 1;
            body.extend(namesz.to_le_bytes());
            body.extend(8u32.to_le_bytes());
            body.extend(kind.to_le_bytes());
            body.extend(*name);
            body.push(0);
            while body.len() % 4 != 0 {
                body.push(0);
            }
            body.extend(0x0100_0850u64.to_le_bytes());
        }
        let mut e = vec![0u8; 64 + 56];
        e[..4].copy_from_slice(b"\x7fELF");
        e[4] = 2; // 64-bit
        e[5] = 1; // little-endian
        e[6] = 1;
        e[16..18].copy_from_slice(&2u16.to_le_bytes()); // executable
        e[18..20].copy_from_slice(&62u16.to_le_bytes()); // x86-64
        e[20..24].copy_from_slice(&1u32.to_le_bytes());
        e[32..40].copy_from_slice(&64u64.to_le_bytes()); // phoff
        e[52..54].copy_from_slice(&64u16.to_le_bytes()); // ehsize
        e[54..56].copy_from_slice(&56u16.to_le_bytes()); // phentsize
        e[56..58].copy_from_slice(&1u16.to_le_bytes()); // phnum
        let ph = &mut e[64..120];
        ph[..4].copy_from_slice(&4u32.to_le_bytes()); // PT_NOTE
        ph[8..16].copy_from_slice(&120u64.to_le_bytes()); // offset
        ph[32..40].copy_from_slice(&(body.len() as u64).to_le_bytes());
        ph[40..48].copy_from_slice(&(body.len() as u64).to_le_bytes());
        ph[48..56].copy_from_slice(&4u64.to_le_bytes());
        e.extend(body);
        e.extend((0..100_000u32).map(|i| (i % 251) as u8));
        e
    }

    /// A bzImage of protocol `version` around `payload` (the size
    /// appended, as the kernel's build does).
    fn bzimage(version: u16, compressed: &[u8], size: usize) -> Vec<u8> {
        let sects = 3u8;
        let mut b = vec![0u8; (sects as usize + 1) * 512 + 100];
        b[SETUP_SECTS_AT] = sects;
        b[0x202..0x206].copy_from_slice(b"HdrS");
        b[VERSION_AT..VERSION_AT + 2].copy_from_slice(&version.to_le_bytes());
        let mut payload = compressed.to_vec();
        payload.extend((size as u32).to_le_bytes());
        b[PAYLOAD_OFFSET_AT..PAYLOAD_OFFSET_AT + 4].copy_from_slice(&100u32.to_le_bytes());
        b[PAYLOAD_LENGTH_AT..PAYLOAD_LENGTH_AT + 4]
            .copy_from_slice(&(payload.len() as u32).to_le_bytes());
        b.extend(payload);
        b.extend(b"trailing setup data");
        b
    }

    fn lz4_legacy_of(data: &[u8]) -> Vec<u8> {
        let mut out = 0x184c_2102u32.to_le_bytes().to_vec();
        for chunk in data.chunks(40_000) {
            let block = lz4_flex::block::compress(chunk);
            out.extend((block.len() as u32).to_le_bytes());
            out.extend(block);
        }
        out
    }

    fn compressed(format: Format, data: &[u8]) -> Vec<u8> {
        match format {
            Format::Gzip => {
                let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                g.write_all(data).unwrap();
                let mut v = g.finish().unwrap();
                // gzip's trailer ends with the size: the build appends none.
                v.truncate(v.len() - 4);
                v
            }
            Format::Xz => {
                let mut x = liblzma::write::XzEncoder::new(Vec::new(), 1);
                x.write_all(data).unwrap();
                x.finish().unwrap()
            }
            Format::Zstd => {
                ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
            }
            Format::Lz4Legacy => lz4_legacy_of(data),
        }
    }

    #[test]
    fn every_format_gives_back_the_kernels_elf_image() {
        let kernel = elf(&[(b"Xen", 6), (b"Xen", XEN_ELFNOTE_PHYS32_ENTRY)]);
        for format in [Format::Gzip, Format::Xz, Format::Zstd, Format::Lz4Legacy] {
            let img = bzimage(0x20f, &compressed(format, &kernel), kernel.len());
            let p = payload(&img).unwrap();
            assert_eq!(Format::of(p).ok(), Some(format));
            let out = decompress(p).unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert!(out == kernel, "{format:?}: not the image compressed");
            pvh_entry(&out).unwrap_or_else(|e| panic!("{format:?}: {e}"));
        }
    }

    #[test]
    fn a_kernel_without_a_pvh_entry_or_a_readable_payload_is_named() {
        let no_entry = elf(&[(b"Xen", 6), (b"GNU", XEN_ELFNOTE_PHYS32_ENTRY)]);
        assert!(
            pvh_entry(&no_entry)
                .unwrap_err()
                .to_string()
                .contains("CONFIG_PVH")
        );
        assert!(
            pvh_entry(b"not an elf")
                .unwrap_err()
                .to_string()
                .contains("not an ELF")
        );

        let kernel = elf(&[(b"Xen", XEN_ELFNOTE_PHYS32_ENTRY)]);
        let lz4 = compressed(Format::Lz4Legacy, &kernel);
        // An old boot protocol names no payload.
        assert!(
            payload(&bzimage(0x207, &lz4, kernel.len()))
                .unwrap_err()
                .to_string()
                .contains("2.07")
        );
        // bzip2 is not read.
        let bz = bzimage(0x20f, b"BZh91AY&SY....", 10);
        assert!(
            decompress(payload(&bz).unwrap())
                .unwrap_err()
                .to_string()
                .contains("42 5a 68 39")
        );
        // A wrong size, a truncated stream, a payload past the file's end.
        let short = bzimage(0x20f, &lz4, kernel.len() + 1);
        assert!(
            decompress(payload(&short).unwrap())
                .unwrap_err()
                .to_string()
                .contains("not the")
        );
        let cut = bzimage(0x20f, &lz4[..lz4.len() - 10], kernel.len());
        assert!(decompress(payload(&cut).unwrap()).is_err());
        let mut past = bzimage(0x20f, &lz4, kernel.len());
        past[PAYLOAD_LENGTH_AT..PAYLOAD_LENGTH_AT + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(payload(&past).unwrap_err().to_string().contains("outside"));
        let huge = bzimage(0x20f, &lz4, MAX_IMAGE as usize + 1);
        assert!(
            decompress(payload(&huge).unwrap())
                .unwrap_err()
                .to_string()
                .contains("claims")
        );
    }
}
