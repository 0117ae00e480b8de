// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/signals.h"

#include <signal.h>

#include <atomic>

namespace ezio::recorder {
namespace {

std::atomic<int> pending{0};
std::atomic<bool> any{false};
std::atomic<int> first_sig{0};
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction saved[3];

void on_signal(int sig, siginfo_t* info, void*) {
  any = true;
  int none = 0;
  first_sig.compare_exchange_strong(none, sig);
  if (info && info->si_code == SI_KERNEL) return;  // from the terminal: the application has it
  pending = sig;
}

}  // namespace

SignalForwarding::SignalForwarding() {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &saved[i]);
}

SignalForwarding::~SignalForwarding() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &saved[i], nullptr);
}

int SignalForwarding::take() { return pending.exchange(0); }
bool SignalForwarding::received_any() const { return any; }
int SignalForwarding::first() const { return first_sig; }

}  // namespace ezio::recorder
