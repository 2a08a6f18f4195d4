#include "metrics_adapter/discovery/naming.h"

#include <re2/re2.h>

#include <utility>
#include <vector>

#include "metrics_adapter/text/utf8.h"

namespace metrics_adapter::discovery {
namespace {

std::unique_ptr<re2::RE2> compileRegex(const std::string& pattern, const std::string& field) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto regex = std::make_unique<re2::RE2>(pattern, options);
  if (!regex->ok()) {
    throw config::ConfigError(field + ": invalid regex \"" + pattern + "\": " + regex->error());
  }
  return regex;
}

// Go's unicode.IsLetter || unicode.IsDigit for one UTF-8 character. Compiled on the first
// non-ASCII character only: the Unicode classes make a 120 KB program, which every server kept
// for life when it was built on the first "$1".
bool isLetterOrDigit(std::string_view character) {
  static const re2::RE2 kLetterOrDigit("[\\p{L}\\p{Nd}]");
  return re2::RE2::FullMatch(re2::StringPiece(character.data(), character.size()), kLetterOrDigit);
}

// Length of the reference name at the start of `text`: the longest run of letters, digits and
// underscores, with Go's unicode.IsLetter / unicode.IsDigit for non-ASCII characters.
std::size_t nameLength(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
      ++i;
      continue;
    }
    // Other ASCII ends the name; a multi-byte character continues it if it is a letter or digit.
    const std::size_t length = text::utf8SequenceLength(text, i);
    if (length <= 1 || !isLetterOrDigit(text.substr(i, length))) break;
    i += length;
  }
  return i;
}

struct Reference {
  std::string_view name;
  int number = -1;  // -1: a name, not a group number
  std::size_t consumed = 0;
};

// Go's regexp `extract`: parses "name" or "{name}" after a '$'; nullopt when malformed.
std::optional<Reference> extractReference(std::string_view text) {
  const bool brace = !text.empty() && text[0] == '{';
  const std::string_view body = brace ? text.substr(1) : text;
  const std::size_t length = nameLength(body);
  if (length == 0) return std::nullopt;
  if (brace && (length >= body.size() || body[length] != '}')) return std::nullopt;
  Reference ref{.name = body.substr(0, length), .consumed = length + (brace ? 2 : 0)};
  int number = 0;
  for (char c : ref.name) {
    if (c < '0' || c > '9' || number >= 100'000'000) {
      number = -1;
      break;
    }
    number = number * 10 + (c - '0');
  }
  if (ref.name.size() > 1 && ref.name[0] == '0') number = -1;  // no leading zeros
  ref.number = number;
  return ref;
}

// Go's Regexp.ExpandString: $n ${n} $name ${name}, $$ for '$', unknown or unmatched groups
// expand to nothing, a malformed reference leaves the '$' as text.
std::string expand(std::string_view tmpl, const re2::RE2& regex,
                   const std::vector<re2::StringPiece>& groups) {
  std::string out;
  while (!tmpl.empty()) {
    const std::size_t dollar = tmpl.find('$');
    if (dollar == std::string_view::npos) break;
    out.append(tmpl.substr(0, dollar));
    tmpl.remove_prefix(dollar + 1);
    if (!tmpl.empty() && tmpl[0] == '$') {
      out.push_back('$');
      tmpl.remove_prefix(1);
      continue;
    }
    const std::optional<Reference> ref = extractReference(tmpl);
    if (!ref) {
      out.push_back('$');
      continue;
    }
    tmpl.remove_prefix(ref->consumed);
    int index = ref->number;
    if (index < 0) {
      const auto& names = regex.NamedCapturingGroups();
      const auto it = names.find(std::string(ref->name));
      index = it == names.end() ? -1 : it->second;
    }
    if (index >= 0 && static_cast<std::size_t>(index) < groups.size() &&
        groups[index].data() != nullptr) {
      out.append(groups[index].data(), groups[index].size());
    }
  }
  out.append(tmpl);
  return out;
}

}  // namespace

struct SeriesNamer::Filter {
  bool is = true;
  std::unique_ptr<re2::RE2> regex;
};

SeriesNamer::SeriesNamer(const config::DiscoveryRule& rule, const std::string& path) {
  for (std::size_t i = 0; i < rule.series_filters.size(); ++i) {
    const config::SeriesFilter& filter = rule.series_filters[i];
    const std::string field =
        path + ".seriesFilters[" + std::to_string(i) + "]." + (filter.is ? "is" : "isNot");
    filters_.push_back(Filter{.is = filter.is, .regex = compileRegex(filter.pattern, field)});
  }
  // An empty `matches` takes the whole name and filters nothing, like upstream's ".*".
  matches_ =
      compileRegex(rule.name.matches.empty() ? ".*" : rule.name.matches, path + ".name.matches");
  as_ = rule.name.as;
  if (as_.empty()) {
    const int groups = matches_->NumberOfCapturingGroups();
    if (groups >= 2) {
      throw config::ConfigError(
          path + ".name.as: required when name.matches has 2 or more capture groups");
    }
    as_ = groups == 0 ? "$0" : "$1";
  }
}

SeriesNamer::~SeriesNamer() = default;
SeriesNamer::SeriesNamer(SeriesNamer&&) noexcept = default;
SeriesNamer& SeriesNamer::operator=(SeriesNamer&&) noexcept = default;

std::optional<std::string> SeriesNamer::metricName(std::string_view series_name) const {
  const re2::StringPiece text(series_name.data(), series_name.size());
  for (const Filter& filter : filters_) {
    if (re2::RE2::PartialMatch(text, *filter.regex) != filter.is) return std::nullopt;
  }
  std::vector<re2::StringPiece> groups(
      static_cast<std::size_t>(matches_->NumberOfCapturingGroups()) + 1);
  if (!matches_->Match(text, 0, text.size(), re2::RE2::UNANCHORED, groups.data(),
                       static_cast<int>(groups.size()))) {
    return std::nullopt;
  }
  return expand(as_, *matches_, groups);
}

}  // namespace metrics_adapter::discovery
