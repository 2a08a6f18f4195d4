#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace metrics_adapter::net {

// Inflates a gzip stream (RFC 1952) as its bytes arrive, in any split: the header, the deflate
// data and the CRC-32/length trailer of each member, members one after another (as Go's
// gzip.Reader reads them). It is what Prometheus's answers are compressed with.
// Why not zlib's own gzip mode: zlib checks the CRC-32 with its table-driven crc32_z, which was
// 16% of the CPU of a 1M-series relist (260 MB inflated). Here zlib inflates raw deflate data
// and libdeflate computes the same CRC-32 with carry-less multiplication (PCLMULQDQ) where the
// CPU has it, several times faster; the answer is still checked byte for byte.
// Throws std::runtime_error for a stream that is not gzip or is corrupt (a bad header, a bad
// deflate block, a CRC or length mismatch), saying which.
class GzipDecoder {
 public:
  struct Step {
    std::size_t consumed = 0;  // input bytes used
    std::size_t produced = 0;  // output bytes written
  };

  GzipDecoder();
  ~GzipDecoder();
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;

  // Decodes `input` into `output`. Uses all the input unless the output fills up: the caller
  // then calls again with the rest and more room.
  Step decode(const std::uint8_t* input, std::size_t input_size, std::uint8_t* output,
              std::size_t output_size);

  // True when the last byte decoded ended a member (its trailer checked out): the stream may
  // end here. False in the middle of a member, and before any byte.
  bool complete() const { return part_ == Part::kBetweenMembers; }

 private:
  enum class Part { kHeader, kBody, kTrailer, kBetweenMembers };
  // Header fields after the fixed ten bytes, in the order RFC 1952 puts them.
  enum class HeaderField { kFixed, kExtraLength, kExtra, kName, kComment, kHeaderCrc, kDone };

  // Reads header bytes; true once the whole header is in.
  bool readHeader(const std::uint8_t*& input, const std::uint8_t* end);
  void startBody();
  void checkTrailer() const;
  // The header field after `after` that FLG (and XLEN) say is there.
  HeaderField nextField(HeaderField after) const;
  bool present(HeaderField field) const;

  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
  Part part_ = Part::kHeader;
  HeaderField field_ = HeaderField::kFixed;
  std::array<std::uint8_t, 10> fixed_{};   // ID1 ID2 CM FLG MTIME(4) XFL OS
  std::size_t field_bytes_ = 0;            // bytes of the current field read so far
  std::size_t extra_length_ = 0;           // XLEN
  std::array<std::uint8_t, 8> trailer_{};  // CRC32 and ISIZE, little-endian
  std::size_t trailer_bytes_ = 0;
  std::uint32_t crc_ = 0;   // of the member's output so far
  std::uint32_t size_ = 0;  // of the member's output so far, modulo 2^32 as ISIZE is
};

}  // namespace metrics_adapter::net
