// Folding a group whose size is not a power of two onto the largest power of two below it.
#pragma once

namespace ddlsim::collectives {

/** @brief The standard fold (MPICH): with p' the largest power of two <= P and r = P - p', members
 *  0..2r-1 pair up (2i, 2i+1): the even one hands its vector to the odd one before the main algorithm
 *  and gets the result back after it. Members that take part have a virtual rank in 0..p'-1. */
struct PowerOfTwoFold {
  int p2 = 1;      ///< p', the largest power of two <= P
  int extra = 0;   ///< r = P - p'
  explicit PowerOfTwoFold(int p)
  {
    while (p2 * 2 <= p)
      p2 *= 2;
    extra = p - p2;
  }
  /** -1 for a member that sits the main algorithm out (an even member below 2r). */
  int virtual_rank(int member) const
  {
    if (member < 2 * extra)
      return member % 2 == 0 ? -1 : member / 2;
    return member - extra;
  }
  int member(int virtual_rank) const { return virtual_rank < extra ? 2 * virtual_rank + 1 : virtual_rank + extra; }
};

} // namespace ddlsim::collectives
