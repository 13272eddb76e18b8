#include "dispatch/method_id.hpp"

namespace chens {

const char* method_name(MethodId m) {
  switch (m) {
    case MethodId::euler: return "euler";
    case MethodId::rk2: return "rk2";
    case MethodId::rk4: return "rk4";
    case MethodId::dopri5: return "dopri5";
    case MethodId::midpoint: return "midpoint";
    case MethodId::gauss2: return "gauss2";
    case MethodId::rattle: return "rattle";
    case MethodId::verlet: return "verlet";
    case MethodId::rattle4: return "rattle4";
    case MethodId::rattle4_suzuki: return "rattle4-suzuki";
    case MethodId::rattle6: return "rattle6";
    case MethodId::rattle8: return "rattle8";
    case MethodId::dop853: return "dop853";
    case MethodId::vern9: return "vern9";
    case MethodId::rodas5p: return "rodas5p";
    case MethodId::lobatto3: return "lobatto3";
  }
  return "?";
}

}  // namespace chens
