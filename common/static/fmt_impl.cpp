// SPDX-License-Identifier: GPL-2.0-only
// fmt's compiled part, built into the programs instead of loaded from libfmt.so: with spdlog's
// (spdlog_impl.cpp), libstdc++ and OTF2 linked statically, eziotrace loads no C++ shared library
// when it starts, which is on the way to every recorded application's start (docs/service.md).
// The explicit instantiations are those the headers declare extern for the compiled library.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

}  // namespace detail
FMT_END_NAMESPACE
