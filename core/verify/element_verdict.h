#ifndef KL_VERIFY_ELEMENT_VERDICT_H
#define KL_VERIFY_ELEMENT_VERDICT_H
// One element of a candidate's output against the reference's: the maths that the runner's device
// comparison (runner/runner_kernels.cu.inc, compiled by NVRTC with this file prepended) and the host's
// checks (core/verify) share, so that the two cannot drift apart. Plain C++ without library calls: NVRTC
// compiles it without headers.
#ifdef __CUDACC_RTC__
#define KL_VERDICT_FN __device__ __forceinline__
#else
#define KL_VERDICT_FN inline
#endif

struct KlElementVerdict {
    int counted; // 0: NaN where NaN was expected, or the same infinity (no error to count)
    int within; // |got - want| <= atol + rtol * |want|; NaN matches NaN, +-Inf the same Inf
    int nonFinite; // NaN/Inf where the reference is finite (floating types only)
    double absError; // |got - want|; +Inf where that is not a number
    double relError; // absError / |want| where |want| > atol and |want| > 0, else -1 (not meaningful)
    double score; // outside tolerance: absError / allowed (absError where nothing is allowed); -1 within
};

KL_VERDICT_FN bool klVerdictIsNan(double v) { return v != v; }
KL_VERDICT_FN bool klVerdictIsInf(double v) { return v == v && v - v != v - v; }
KL_VERDICT_FN double klVerdictAbs(double v) { return v < 0.0 ? -v : v; }

KL_VERDICT_FN KlElementVerdict klElementVerdict(double got, double want, int floating, double atol, double rtol)
{
    KlElementVerdict v;
    const bool wantFinite = !klVerdictIsNan(want) && !klVerdictIsInf(want);
    const bool gotFinite = !klVerdictIsNan(got) && !klVerdictIsInf(got);
    v.nonFinite = floating && wantFinite && !gotFinite;
    if (klVerdictIsNan(want) || klVerdictIsNan(got))
        v.within = klVerdictIsNan(want) && klVerdictIsNan(got);
    else if (klVerdictIsInf(want) || klVerdictIsInf(got))
        v.within = got == want;
    else
        v.within = klVerdictAbs(got - want) <= atol + rtol * klVerdictAbs(want);
    const double error = klVerdictAbs(got - want);
    v.counted = !(v.within && klVerdictIsNan(error));
    v.absError = klVerdictIsNan(error) ? 1.0 / 0.0 : error;
    const double magnitude = klVerdictAbs(want);
    v.relError = magnitude > atol && magnitude > 0.0 ? v.absError / magnitude : -1.0;
    const double allowed = atol + rtol * magnitude;
    v.score = v.within ? -1.0 : (allowed > 0.0 ? v.absError / allowed : v.absError);
    return v;
}

#endif
