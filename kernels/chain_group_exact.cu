// The group kernels of chain_group.cu compiled with -fmad=false and CHENS_UNFUSED
// (kernels/CMakeLists.txt; config.hpp's fmadd then rounds twice, as on the host): no product
// is fused into an addition, so every value is the CPU's (G = 1) bit for bit
// (tests/gpu/test_chain_group.cpp), at the cost of the FMAs' throughput.
#define CHENS_CHAIN_GROUP_EXACT 1
#include "chain_group.cu"
