#include "core/report/source_diff.h"

#include <dtl/dtl.hpp>

#include <algorithm>
#include <sstream>

namespace kl::report {

namespace {

std::vector<std::string> linesOf(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        out.push_back(l);
    return out;
}

// Every line of both sources in edit order, numbered on the side(s) it belongs to.
std::vector<DiffLine> editScript(const std::string& before, const std::string& after)
{
    dtl::Diff<std::string> diff(linesOf(before), linesOf(after));
    diff.compose();
    std::vector<DiffLine> out;
    int b = 0;
    int a = 0;
    for (const auto& [text, info] : diff.getSes().getSequence()) {
        DiffLine line;
        line.text = text;
        if (info.type == dtl::SES_ADD) {
            line.kind = DiffLine::Kind::Added;
            line.afterLine = ++a;
        } else if (info.type == dtl::SES_DELETE) {
            line.kind = DiffLine::Kind::Removed;
            line.beforeLine = ++b;
        } else {
            line.beforeLine = ++b;
            line.afterLine = ++a;
        }
        out.push_back(std::move(line));
    }
    // Within each run of changes, removed lines before added ones (dtl may interleave them), as
    // unified diffs read and as a side-by-side view pairs them.
    for (auto it = out.begin(); it != out.end();) {
        auto end = std::find_if(it, out.end(), [](const DiffLine& l) { return l.kind == DiffLine::Kind::Same; });
        std::stable_partition(it, end, [](const DiffLine& l) { return l.kind == DiffLine::Kind::Removed; });
        it = end == out.end() ? end : end + 1;
    }
    return out;
}

DiffHunk hunkOf(const std::vector<DiffLine>& script, std::size_t from, std::size_t to)
{
    DiffHunk h;
    h.lines.assign(script.begin() + std::ptrdiff_t(from), script.begin() + std::ptrdiff_t(to));
    // Lines before the hunk on each side: a side with no line in the hunk starts after them.
    int beforeSeen = 0;
    int afterSeen = 0;
    for (std::size_t i = 0; i < from; ++i) {
        beforeSeen = std::max(beforeSeen, script[i].beforeLine);
        afterSeen = std::max(afterSeen, script[i].afterLine);
    }
    for (const auto& l : h.lines) {
        if (l.beforeLine) {
            if (!h.beforeCount++)
                h.beforeStart = l.beforeLine;
        }
        if (l.afterLine) {
            if (!h.afterCount++)
                h.afterStart = l.afterLine;
        }
    }
    if (!h.beforeCount)
        h.beforeStart = beforeSeen;
    if (!h.afterCount)
        h.afterStart = afterSeen;
    return h;
}

} // namespace

SourceDiff diffSources(const std::string& before, const std::string& after, int context)
{
    SourceDiff out;
    if (before == after)
        return out;
    const auto script = editScript(before, after);
    const auto keep = std::size_t(std::max(0, context));
    std::vector<std::size_t> changes;
    for (std::size_t i = 0; i < script.size(); ++i) {
        if (script[i].kind == DiffLine::Kind::Added)
            ++out.added;
        else if (script[i].kind == DiffLine::Kind::Removed)
            ++out.removed;
        if (script[i].kind != DiffLine::Kind::Same)
            changes.push_back(i);
    }
    if (changes.empty()) // only the final newline differs
        return out;
    std::size_t first = changes.front();
    std::size_t last = first;
    for (std::size_t c = 1; c <= changes.size(); ++c) {
        if (c < changes.size() && changes[c] - last <= 2 * keep + 1) {
            last = changes[c];
            continue;
        }
        out.hunks.push_back(hunkOf(script, first >= keep ? first - keep : 0, std::min(script.size(), last + keep + 1)));
        if (c < changes.size())
            first = last = changes[c];
    }
    return out;
}

std::string unifiedDiffText(const SourceDiff& diff, const std::string& beforeName, const std::string& afterName)
{
    if (diff.same())
        return {};
    std::ostringstream out;
    out << "--- " << beforeName << "\n+++ " << afterName << "\n";
    for (const auto& h : diff.hunks) {
        out << "@@ -" << h.beforeStart << "," << h.beforeCount << " +" << h.afterStart << "," << h.afterCount
            << " @@\n";
        for (const auto& l : h.lines)
            out << (l.kind == DiffLine::Kind::Added     ? '+'
                    : l.kind == DiffLine::Kind::Removed ? '-'
                                                        : ' ')
                << l.text << "\n";
    }
    return out.str();
}

std::string unifiedDiff(
    const std::string& before, const std::string& after, const std::string& beforeName, const std::string& afterName)
{
    return unifiedDiffText(diffSources(before, after), beforeName, afterName);
}

std::vector<SideBySideRow> sideBySide(const SourceDiff& diff)
{
    std::vector<SideBySideRow> rows;
    for (const auto& h : diff.hunks) {
        if (!rows.empty())
            rows.push_back({ SideBySideRow::Kind::HunkBreak, std::nullopt, {}, std::nullopt, {} });
        std::size_t i = 0;
        while (i < h.lines.size()) {
            const auto& l = h.lines[i];
            if (l.kind == DiffLine::Kind::Same) {
                rows.push_back({ SideBySideRow::Kind::Same, l.beforeLine, l.text, l.afterLine, l.text });
                ++i;
                continue;
            }
            // A run of removed lines, then the added lines that replace them, side by side.
            std::vector<const DiffLine*> removed, added;
            while (i < h.lines.size() && h.lines[i].kind == DiffLine::Kind::Removed)
                removed.push_back(&h.lines[i++]);
            while (i < h.lines.size() && h.lines[i].kind == DiffLine::Kind::Added)
                added.push_back(&h.lines[i++]);
            for (std::size_t r = 0; r < std::max(removed.size(), added.size()); ++r) {
                SideBySideRow row;
                row.kind = r < removed.size() && r < added.size() ? SideBySideRow::Kind::Changed
                    : r < removed.size()                          ? SideBySideRow::Kind::Removed
                                                                  : SideBySideRow::Kind::Added;
                if (r < removed.size()) {
                    row.beforeLine = removed[r]->beforeLine;
                    row.beforeText = removed[r]->text;
                }
                if (r < added.size()) {
                    row.afterLine = added[r]->afterLine;
                    row.afterText = added[r]->text;
                }
                rows.push_back(std::move(row));
            }
        }
    }
    return rows;
}

std::string sideBySideText(const SourceDiff& diff, int columnWidth)
{
    const auto width = std::size_t(std::max(8, columnWidth));
    auto cell = [width](const std::optional<int>& line, const std::string& text) {
        std::string c = line ? std::to_string(*line) : std::string();
        c.resize(5, ' ');
        c += text;
        c.resize(width, ' ');
        return c;
    };
    std::ostringstream out;
    for (const auto& r : sideBySide(diff)) {
        if (r.kind == SideBySideRow::Kind::HunkBreak) {
            out << std::string(width, '.') << "   " << std::string(width, '.') << "\n";
            continue;
        }
        const char* mark = r.kind == SideBySideRow::Kind::Same ? "   "
            : r.kind == SideBySideRow::Kind::Changed           ? " | "
            : r.kind == SideBySideRow::Kind::Removed           ? " < "
                                                               : " > ";
        auto line = cell(r.beforeLine, r.beforeText) + mark + cell(r.afterLine, r.afterText);
        line.erase(line.find_last_not_of(' ') + 1);
        out << line << "\n";
    }
    return out.str();
}

} // namespace kl::report
