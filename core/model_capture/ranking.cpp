#include "core/model_capture/ranking.h"

#include "core/model/dtype.h"
#include "core/model/error.h"
#include "core/verify/speed_of_light.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

namespace kl::model_capture {

namespace {

std::vector<DType> inputTypes(const Operator& op)
{
    std::vector<DType> types;
    for (const auto& t : op.inputs)
        if (t.isTensor)
            if (auto d = parseDType(t.dtype))
                types.push_back(*d);
    return types;
}

std::string folderName(int position, const std::string& id, bool fused)
{
    std::string name;
    for (char c : id)
        name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%02d_", position);
    return prefix + name + (fused ? "_fused" : "");
}

} // namespace

bool Operator::hasActivationInput() const
{
    return std::any_of(
        inputs.begin(), inputs.end(), [](const TensorInfo& t) { return t.isTensor && t.role == "activation"; });
}

const Operator* Capture::find(const std::string& id) const
{
    for (const auto& op : operators)
        if (op.id == id)
            return &op;
    return nullptr;
}

Ranking estimateRanking(const Capture& capture, const std::string& cc)
{
    const auto device = nominalDevice(cc);
    if (!device)
        throw Error("model.no-device-table", {}, {}, "no nominal device for compute capability " + cc);
    Ranking ranking;
    ranking.device = device->name;
    ranking.copyGbps = device->copyGbps;
    const double fp32 = ceilingTflops(Precision::Fp32, cc, device->smCount, device->smClockMhz);
    char basis[512];
    std::snprintf(basis, sizeof basis,
        "max(bytes / %.0f GB/s, FLOPs / the precision's ceiling) per operator at the "
        "model's shapes, on a nominal %s (sm_%s, %d SMs, %.0f MHz; FP32 CUDA cores %.1f TFLOP/s; a matrix "
        "product in its inputs' precision, anything else on the CUDA cores); no GPU timed it",
        device->copyGbps, device->name.c_str(), std::string(cc).erase(cc.find('.'), 1).c_str(), device->smCount,
        device->smClockMhz, fp32);
    ranking.basis = basis;
    for (const auto& op : capture.operators) {
        if (op.view || (op.bytes <= 0 && op.flops <= 0))
            continue;
        RankedOperator row { op.id, op.label, op.kind, op.flops, op.bytes };
        const auto types = inputTypes(op);
        row.precision = op.matrixProduct ? defaultPrecision(types) : cudaCorePrecision(types);
        const double tflops = ceilingTflops(row.precision, cc, device->smCount, device->smClockMhz);
        const auto balance = verify::balanceOf(op.bytes, op.flops, tflops, device->copyGbps);
        row.timeUs = std::max(balance.memoryUs, balance.computeUs);
        row.bound = balance.bound;
        ranking.totalUs += row.timeUs;
        ranking.rows.push_back(row);
    }
    for (auto& row : ranking.rows)
        row.share = ranking.totalUs > 0 ? row.timeUs / ranking.totalUs : 0.0;
    std::stable_sort(ranking.rows.begin(), ranking.rows.end(),
        [](const RankedOperator& a, const RankedOperator& b) { return a.timeUs > b.timeUs; });
    return ranking;
}

std::vector<ProblemGroup> chooseProblems(const Capture& capture, const Ranking& ranking, std::optional<int> top)
{
    constexpr double kCover = 0.8;
    constexpr int kDefaultMost = 8;
    std::vector<ProblemGroup> groups;
    std::set<std::string> taken;
    double covered = 0.0;
    for (const auto& row : ranking.rows) {
        if (top ? int(groups.size()) >= *top : (covered >= kCover || int(groups.size()) >= kDefaultMost))
            break;
        const Operator* op = capture.find(row.id);
        if (!op || taken.count(row.id) || !op->random.empty() || !op->hasActivationInput())
            continue;
        ProblemGroup group;
        group.ops = { row.id };
        for (const auto& chain : capture.fusion)
            if (!chain.empty() && chain.front() == row.id
                && std::none_of(chain.begin(), chain.end(), [&](const std::string& id) { return taken.count(id); }))
                group.ops = chain;
        group.fused = group.ops.size() > 1;
        for (const auto& id : group.ops) {
            taken.insert(id);
            for (const auto& r : ranking.rows)
                if (r.id == id) {
                    group.share += r.share;
                    group.timeUs += r.timeUs;
                }
        }
        group.name = folderName(int(groups.size()) + 1, row.id, group.fused);
        covered += group.share;
        groups.push_back(group);
    }
    return groups;
}

std::string rankingLabel(const Ranking& ranking) { return ranking.measured ? "measured" : "estimate, not measured"; }

} // namespace kl::model_capture
