#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace metrics_adapter::server {

// The Beast body of every answer the server writes: the answer's own bytes, or bytes shared
// with other answers (HttpResponse::shared_body, a discovery document rendered once per
// registry snapshot) and written from where they are, without a copy per answer.
// The member names are those Beast's Body concept requires.
struct ResponseBody {
  struct value_type {  // NOLINT(readability-identifier-naming)
    std::string owned;
    std::shared_ptr<const std::string> shared;

    std::string_view view() const {
      return shared ? std::string_view(*shared) : std::string_view(owned);
    }
  };

  static std::uint64_t size(const value_type& body) { return body.view().size(); }

  // Hands the whole body to the serializer as one buffer.
  class writer {  // NOLINT(readability-identifier-naming)
   public:
    using const_buffers_type = boost::asio::const_buffer;  // NOLINT(readability-identifier-naming)

    template <bool kIsRequest, class Fields>
    writer(const boost::beast::http::header<kIsRequest, Fields>& /*header*/, const value_type& body)
        : body_(body.view()) {}

    void init(boost::beast::error_code& ec) { ec = {}; }

    boost::optional<std::pair<const_buffers_type, bool>> get(boost::beast::error_code& ec) {
      ec = {};
      if (sent_ || body_.empty()) return boost::none;
      sent_ = true;
      return std::make_pair(const_buffers_type(body_.data(), body_.size()), false);
    }

   private:
    std::string_view body_;
    bool sent_ = false;
  };
};

}  // namespace metrics_adapter::server
