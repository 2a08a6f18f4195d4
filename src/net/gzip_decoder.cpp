#include "metrics_adapter/net/gzip_decoder.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace metrics_adapter::net {
namespace {

constexpr std::uint8_t kId1 = 0x1f;
constexpr std::uint8_t kId2 = 0x8b;
constexpr std::uint8_t kDeflate = 8;
// FLG bits (RFC 1952, 2.3.1). FTEXT only hints at the content and is ignored.
constexpr std::uint8_t kHeaderCrcFlag = 0x02;
constexpr std::uint8_t kExtraFlag = 0x04;
constexpr std::uint8_t kNameFlag = 0x08;
constexpr std::uint8_t kCommentFlag = 0x10;
constexpr std::uint8_t kReservedFlags = 0xe0;
constexpr int kRawDeflateWindowBits = -15;  // negative: no zlib or gzip wrapper

std::uint32_t littleEndian32(const std::uint8_t* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8U |
         static_cast<std::uint32_t>(bytes[2]) << 16U | static_cast<std::uint32_t>(bytes[3]) << 24U;
}

[[noreturn]] void corrupt(const std::string& what) {
  throw std::runtime_error("gzip answer: " + what);
}

}  // namespace

struct GzipDecoder::Inflater {
  z_stream stream{};
  Inflater() {
    if (inflateInit2(&stream, kRawDeflateWindowBits) != Z_OK) {
      throw std::runtime_error("gzip answer: zlib could not start inflating (out of memory)");
    }
  }
  ~Inflater() { inflateEnd(&stream); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
};

GzipDecoder::GzipDecoder() : inflater_(std::make_unique<Inflater>()) {}

GzipDecoder::~GzipDecoder() = default;

GzipDecoder::Step GzipDecoder::decode(const std::uint8_t* input, std::size_t input_size,
                                      std::uint8_t* output, std::size_t output_size) {
  const std::uint8_t* in = input;
  const std::uint8_t* const in_end = input + input_size;
  std::uint8_t* out = output;
  std::uint8_t* const out_end = output + output_size;
  while (true) {
    switch (part_) {
      case Part::kBetweenMembers:
        if (in == in_end) return {input_size, static_cast<std::size_t>(out - output)};
        part_ = Part::kHeader;
        [[fallthrough]];
      case Part::kHeader:
        if (!readHeader(in, in_end)) return {input_size, static_cast<std::size_t>(out - output)};
        startBody();
        break;
      case Part::kBody: {
        if (in == in_end || out == out_end) {
          return {static_cast<std::size_t>(in - input), static_cast<std::size_t>(out - output)};
        }
        z_stream& stream = inflater_->stream;
        // zlib counts in uInt; a larger buffer is simply used in several turns of this loop.
        constexpr std::size_t kMost = std::numeric_limits<uInt>::max();
        stream.next_in = const_cast<Bytef*>(
            in);  // NOLINT(cppcoreguidelines-pro-type-const-cast): zlib's API predates const
        stream.avail_in = static_cast<uInt>(std::min<std::size_t>(in_end - in, kMost));
        stream.next_out = out;
        stream.avail_out = static_cast<uInt>(std::min<std::size_t>(out_end - out, kMost));
        const int status = inflate(&stream, Z_NO_FLUSH);
        const std::size_t produced = stream.next_out - out;
        crc_ = libdeflate_crc32(crc_, out, produced);
        size_ += static_cast<std::uint32_t>(produced);
        const bool progressed = produced > 0 || stream.next_in != in;
        in = stream.next_in;
        out = stream.next_out;
        if (status == Z_STREAM_END) {
          part_ = Part::kTrailer;
          trailer_bytes_ = 0;
        } else if (status == Z_DATA_ERROR) {
          corrupt(stream.msg != nullptr ? std::string("bad deflate data (") + stream.msg + ")"
                                        : "bad deflate data");
        } else if ((status != Z_OK && status != Z_BUF_ERROR) || !progressed) {
          corrupt("zlib failed inflating (status " + std::to_string(status) + ")");
        }
        break;
      }
      case Part::kTrailer: {
        const std::size_t take =
            std::min<std::size_t>(trailer_.size() - trailer_bytes_, in_end - in);
        std::copy_n(in, take, trailer_.begin() + static_cast<std::ptrdiff_t>(trailer_bytes_));
        in += take;
        trailer_bytes_ += take;
        if (trailer_bytes_ < trailer_.size()) {
          return {input_size, static_cast<std::size_t>(out - output)};
        }
        checkTrailer();
        part_ = Part::kBetweenMembers;
        break;
      }
    }
  }
}

bool GzipDecoder::readHeader(const std::uint8_t*& input, const std::uint8_t* end) {
  while (field_ != HeaderField::kDone) {
    if (input == end) return false;
    const std::uint8_t byte = *input++;
    switch (field_) {
      case HeaderField::kFixed:
        fixed_[field_bytes_++] = byte;
        if (field_bytes_ <= 2 && byte != (field_bytes_ == 1 ? kId1 : kId2)) {
          corrupt("not gzip data (bad magic number)");
        }
        if (field_bytes_ == 3 && byte != kDeflate) {
          corrupt("unknown compression method " + std::to_string(byte));
        }
        if (field_bytes_ == 4 && (byte & kReservedFlags) != 0) corrupt("reserved header flags set");
        if (field_bytes_ < fixed_.size()) continue;
        extra_length_ = 0;
        break;
      case HeaderField::kExtraLength:  // XLEN, little-endian
        extra_length_ |= static_cast<std::size_t>(byte) << (8U * field_bytes_++);
        if (field_bytes_ < 2) continue;
        break;
      case HeaderField::kExtra:
        if (++field_bytes_ < extra_length_) continue;
        break;
      case HeaderField::kName:
      case HeaderField::kComment:
        if (byte != 0) continue;  // both end at a zero byte
        break;
      case HeaderField::kHeaderCrc:
        // The header's CRC-16: Go's writer never sets it, and the body's CRC-32 is checked.
        if (++field_bytes_ < 2) continue;
        break;
      case HeaderField::kDone:
        break;
    }
    field_ = nextField(field_);
    field_bytes_ = 0;
  }
  return true;
}

bool GzipDecoder::present(HeaderField field) const {
  const std::uint8_t flags = fixed_[3];
  switch (field) {
    case HeaderField::kExtraLength:
      return (flags & kExtraFlag) != 0;
    case HeaderField::kExtra:
      return (flags & kExtraFlag) != 0 && extra_length_ > 0;
    case HeaderField::kName:
      return (flags & kNameFlag) != 0;
    case HeaderField::kComment:
      return (flags & kCommentFlag) != 0;
    case HeaderField::kHeaderCrc:
      return (flags & kHeaderCrcFlag) != 0;
    case HeaderField::kFixed:
    case HeaderField::kDone:
      return true;
  }
  return true;
}

GzipDecoder::HeaderField GzipDecoder::nextField(HeaderField after) const {
  auto field = after;
  do {
    field = static_cast<HeaderField>(static_cast<int>(field) + 1);
  } while (!present(field));
  return field;
}

void GzipDecoder::startBody() {
  if (inflateReset(&inflater_->stream) != Z_OK) corrupt("zlib could not restart inflating");
  part_ = Part::kBody;
  field_ = HeaderField::kFixed;
  field_bytes_ = 0;
  crc_ = 0;
  size_ = 0;
}

void GzipDecoder::checkTrailer() const {
  if (littleEndian32(trailer_.data()) != crc_) corrupt("CRC-32 mismatch (the data is damaged)");
  if (littleEndian32(trailer_.data() + 4) != size_) {
    corrupt("length mismatch (the data is damaged)");
  }
}

}  // namespace metrics_adapter::net
