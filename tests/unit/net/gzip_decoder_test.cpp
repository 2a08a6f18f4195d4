#include "metrics_adapter/net/gzip_decoder.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "unit/net/deflate_text.h"

namespace metrics_adapter::net {
namespace {

// Text that compresses as a series answer does (repeated label names) but is not all repeats.
std::string seriesLikeText(int series) {
  std::string text = R"({"status":"success","data":[)";
  for (int i = 0; i < series; ++i) {
    text += (i > 0 ? "," : "") + std::string(R"({"__name__":"DCGM_FI_DEV_GPU_UTIL","pod":"p)") +
            std::to_string(i * 7919 % 100003) + R"(","gpu":")" + std::to_string(i % 8) + "\"}";
  }
  return text + "]}";
}

std::string gzip(const std::string& text) { return testing::deflateText(text); }

std::string littleEndian32(std::uint32_t value) {
  std::string bytes;
  for (int i = 0; i < 4; ++i) bytes += static_cast<char>((value >> (8 * i)) & 0xffU);
  return bytes;
}

std::uint32_t zlibCrc(const std::string& text) {
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

// A gzip member written by hand around zlib's raw deflate data, with the header `flags` and the
// optional fields they announce.
std::string handMadeMember(const std::string& text, std::uint8_t flags) {
  std::string member = {'\x1f', '\x8b', '\x08', static_cast<char>(flags), 0, 0, 0, 0, 0, '\x03'};
  if ((flags & 0x04U) != 0)
    member += std::string(
        "\x05\x00"
        "AB\x02\x00z",
        7);                                                              // FEXTRA
  if ((flags & 0x08U) != 0) member += std::string("answer.json\0", 12);  // FNAME
  if ((flags & 0x10U) != 0) member += std::string("a comment\0", 10);    // FCOMMENT
  if ((flags & 0x02U) != 0) member += "\x12\x34";                        // FHCRC
  return member + testing::deflateText(text, -15) + littleEndian32(zlibCrc(text)) +
         littleEndian32(static_cast<std::uint32_t>(text.size()));
}

struct Decoded {
  std::string text;
  bool complete = false;  // the decoder said the stream may end where the input did
};

// Feeds `stream` `in_piece` bytes at a time into an output buffer of `out_room` bytes, as
// cpprestsdk calls a decoder: again with the rest while the output filled up.
Decoded decodeInPieces(GzipDecoder& decoder, const std::string& stream, std::size_t in_piece,
                       std::size_t out_room) {
  Decoded decoded;
  std::vector<std::uint8_t> out(out_room);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(stream.data());
  for (std::size_t at = 0; at < stream.size();) {
    const std::size_t piece = std::min(in_piece, stream.size() - at);
    std::size_t used = 0;
    while (used < piece) {
      const GzipDecoder::Step step =
          decoder.decode(bytes + at + used, piece - used, out.data(), out.size());
      decoded.text.append(reinterpret_cast<const char*>(out.data()), step.produced);
      // All the input is used unless the output filled up.
      if (step.consumed < piece - used) {
        EXPECT_EQ(step.produced, out.size());
      }
      used += step.consumed;
    }
    at += piece;
  }
  decoded.complete = decoder.complete();
  return decoded;
}

Decoded decodeWhole(const std::string& stream) {
  GzipDecoder decoder;
  return decodeInPieces(decoder, stream, stream.size(), 1 << 20);
}

TEST(GzipDecoderTest, InflatesWhatZlibGzippedInAnySplitOfInputAndOutput) {
  const std::string text = seriesLikeText(20000);
  const std::string stream = gzip(text);
  ASSERT_LT(stream.size(), text.size() / 4);
  const std::size_t in_pieces[] = {1, 7, 2048, 65536, stream.size()};
  const std::size_t out_rooms[] = {1, 13, 4096, 1 << 20};
  for (const std::size_t in_piece : in_pieces) {
    for (const std::size_t out_room : out_rooms) {
      if (in_piece == 1 && out_room == 1 << 20) continue;  // covered by (1, 4096); slow otherwise
      GzipDecoder decoder;
      const Decoded decoded = decodeInPieces(decoder, stream, in_piece, out_room);
      EXPECT_EQ(decoded.text.size(), text.size()) << in_piece << " in, " << out_room << " out";
      EXPECT_TRUE(decoded.text == text) << in_piece << " in, " << out_room << " out";
      EXPECT_TRUE(decoded.complete) << in_piece << " in, " << out_room << " out";
    }
  }
}

TEST(GzipDecoderTest, CompleteOnlyOnceTheTrailerIsIn) {
  const std::string text = seriesLikeText(100);
  const std::string stream = gzip(text);
  GzipDecoder decoder;
  EXPECT_FALSE(decoder.complete());  // nothing yet is not a stream
  std::vector<std::uint8_t> out(text.size() + 16);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(stream.data());
  const GzipDecoder::Step most = decoder.decode(bytes, stream.size() - 1, out.data(), out.size());
  EXPECT_EQ(most.consumed, stream.size() - 1);
  EXPECT_EQ(most.produced, text.size());
  EXPECT_FALSE(decoder.complete());
  const GzipDecoder::Step last =
      decoder.decode(bytes + stream.size() - 1, 1, out.data(), out.size());
  EXPECT_EQ(last.consumed, 1u);
  EXPECT_EQ(last.produced, 0u);
  EXPECT_TRUE(decoder.complete());
}

TEST(GzipDecoderTest, ReadsEveryOptionalHeaderField) {
  const std::string text = seriesLikeText(50);
  for (const std::uint8_t flags : {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1e, 0x1f}) {
    const std::string stream = handMadeMember(text, flags);
    EXPECT_EQ(decodeWhole(stream).text, text) << "FLG " << int{flags};
    GzipDecoder decoder;
    EXPECT_EQ(decodeInPieces(decoder, stream, 1, 64).text, text) << "FLG " << int{flags};
  }
  // An FEXTRA field of length 0 ends at its XLEN.
  std::string empty_extra = handMadeMember(text, 0x00);
  empty_extra[3] = 0x04;
  empty_extra.insert(10, std::string("\0\0", 2));
  EXPECT_EQ(decodeWhole(empty_extra).text, text);
}

TEST(GzipDecoderTest, ReadsMembersOneAfterAnother) {
  const std::string first = seriesLikeText(300);
  const std::string second = "and a second member";
  const std::string empty;
  const std::string stream = gzip(first) + gzip(empty) + handMadeMember(second, 0x08);
  const Decoded whole = decodeWhole(stream);
  EXPECT_EQ(whole.text, first + second);
  EXPECT_TRUE(whole.complete);
  GzipDecoder decoder;
  EXPECT_EQ(decodeInPieces(decoder, stream, 5, 100).text, first + second);
}

void expectRefused(const std::string& stream, const std::string& reason) {
  try {
    decodeWhole(stream);
    ADD_FAILURE() << "decoded, expected: " << reason;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(GzipDecoderTest, RefusesWhatIsNotGzipOrIsDamaged) {
  const std::string text = seriesLikeText(200);
  const std::string stream = gzip(text);

  expectRefused(R"({"status":"success"})", "not gzip data");
  std::string method = stream;
  method[2] = 7;
  expectRefused(method, "unknown compression method 7");
  std::string reserved = stream;
  reserved[3] = static_cast<char>(0x20);
  expectRefused(reserved, "reserved header flags");

  std::string crc = stream;
  crc[crc.size() - 8] = static_cast<char>(crc[crc.size() - 8] ^ 0x01);
  expectRefused(crc, "CRC-32 mismatch");
  std::string length = stream;
  length[length.size() - 1] = static_cast<char>(length[length.size() - 1] ^ 0x01);
  expectRefused(length, "length mismatch");

  // A flipped bit in the deflate data: either the deflate decoder or the CRC-32 notices.
  for (const std::size_t at : {std::size_t{10}, stream.size() / 2, stream.size() - 12}) {
    std::string damaged = stream;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    EXPECT_THROW(decodeWhole(damaged), std::runtime_error) << "bit flipped at byte " << at;
  }
  // Bytes after a member that do not start another one.
  expectRefused(stream + "garbage", "not gzip data");
}

}  // namespace
}  // namespace metrics_adapter::net
