#include "widgets/cuda_lexer.h"

#include <QFontDatabase>

namespace kl::gui {

namespace {

// Scintilla's C++ lexer keyword sets (1-based as QScintilla numbers them).
constexpr int kPrimaryKeywords = 1;
constexpr int kSecondaryKeywords = 2;
constexpr int kGlobalClasses = 4;
constexpr int kTaskMarkers = 6;

// C++20 keywords plus CUDA's qualifiers and launch-bound attributes.
constexpr const char* kKeywords
    = "alignas alignof asm auto bool break case catch char char8_t char16_t char32_t class "
      "concept const consteval constexpr constinit const_cast continue co_await co_return "
      "co_yield decltype default delete do double dynamic_cast else enum explicit export "
      "extern false float for friend goto if inline int long mutable namespace new noexcept "
      "nullptr operator private protected public register reinterpret_cast requires return "
      "short signed sizeof static static_assert static_cast struct switch template this "
      "thread_local throw true try typedef typeid typename union unsigned using virtual "
      "void volatile wchar_t while "
      "__global__ __device__ __host__ __shared__ __constant__ __managed__ __grid_constant__ "
      "__restrict__ __restrict __forceinline__ __noinline__ __launch_bounds__ "
      "__cluster_dims__ __align__ __builtin_assume __builtin_expect";

// Built-in variables and the intrinsics a kernel engineer reads most.
constexpr const char* kBuiltins = "threadIdx blockIdx blockDim gridDim warpSize clusterIdx clusterDim "
                                  "__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp "
                                  "__threadfence __threadfence_block __threadfence_system "
                                  "__shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync "
                                  "__ballot_sync __any_sync __all_sync __activemask __match_any_sync __reduce_add_sync "
                                  "__ldg __ldcg __ldca __ldcs __ldlu __ldcv __stcg __stcs __stwb __stwt "
                                  "atomicAdd atomicSub atomicMax atomicMin atomicExch atomicCAS atomicAnd atomicOr "
                                  "__half2float __float2half __float2half_rn __half22float2 __float22half2_rn "
                                  "__bfloat162float __float2bfloat16 __float2bfloat16_rn __hadd __hmul __hfma __hadd2 "
                                  "__hmul2 __hfma2 __expf __logf __sinf __cosf __fdividef __frcp_rn __fmaf_rn rsqrtf "
                                  "tanhf expf fmaf __popc __clz __ffs __brev __funnelshift_l __funnelshift_r __dp4a";

// Types: half/bfloat and the vector types.
constexpr const char* kTypes = "half half2 __half __half2 __nv_bfloat16 __nv_bfloat162 nv_bfloat16 nv_bfloat162 "
                               "__nv_fp8_e4m3 __nv_fp8_e5m2 "
                               "int2 int3 int4 uint2 uint3 uint4 float2 float3 float4 double2 double4 "
                               "char2 char4 uchar2 uchar4 short2 short4 ushort2 ushort4 longlong2 ulonglong2 dim3 "
                               "size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t "
                               "cudaStream_t cudaError_t";

} // namespace

CudaLexer::CudaLexer(QObject* parent)
    : QsciLexerCPP(parent)
{
    setFoldComments(true);
    setFoldCompact(false);
}

const char* CudaLexer::language() const { return "CUDA"; }

const char* CudaLexer::keywords(int set) const
{
    switch (set) {
    case kPrimaryKeywords:
        return kKeywords;
    case kSecondaryKeywords:
        return kBuiltins;
    case kGlobalClasses:
        return kTypes;
    case kTaskMarkers:
        return directiveMarker;
    default:
        return QsciLexerCPP::keywords(set);
    }
}

QColor CudaLexer::defaultColor(int style) const
{
    // A light scheme close to what Compiler Explorer and Nsight show: quiet comments, strong keywords.
    switch (style & 0x3f) {
    case Keyword:
        return QColor(0x00, 0x33, 0xb3);
    case KeywordSet2:
        return QColor(0x87, 0x10, 0x94);
    case GlobalClass:
        return QColor(0x00, 0x7a, 0x7a);
    case Comment:
    case CommentLine:
    case CommentDoc:
    case CommentLineDoc:
        return QColor(0x6a, 0x73, 0x7d);
    case TaskMarker:
        return QColor(0xb3, 0x50, 0x00);
    case Number:
        return QColor(0x17, 0x50, 0xeb);
    case DoubleQuotedString:
    case SingleQuotedString:
        return QColor(0x06, 0x7d, 0x17);
    case PreProcessor:
        return QColor(0x9e, 0x88, 0x0d);
    default:
        return QsciLexerCPP::defaultColor(style);
    }
}

QFont CudaLexer::defaultFont(int style) const
{
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    switch (style & 0x3f) {
    case Keyword:
    case TaskMarker:
        font.setBold(true);
        break;
    default:
        break;
    }
    return font;
}

} // namespace kl::gui
