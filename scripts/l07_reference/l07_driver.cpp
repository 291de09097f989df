// Reference driver for coburst's L07 emulation (coburst/simulator/l07.py): runs a scenario of
// parallel tasks and 1-byte messages on SimGrid 3.32 (Batsim 4.2.1's) under ptask_L07 and
// prints the date of every event with %.17g.
//
//   g++ -O1 -o l07_driver l07_driver.cpp -lsimgrid
//   ./l07_driver PLATFORM.xml SCENARIO.txt --cfg=host/model:ptask_L07
//
// Scenario lines (whitespace separated):
//   task NAME START TIMEOUT CANCEL_AT N HOST_1..HOST_N FLOPS_1..FLOPS_N BYTES_1..BYTES_NxN
//     an actor on HOST_1 sleeps START s, starts the parallel task and waits for it at most
//     TIMEOUT s (< 0: no timeout); a timed-out task keeps running (as in Batsim) until its actor
//     cancels it at CANCEL_AT (required with a timeout); without a timeout, CANCEL_AT >= 0:
//     another actor cancels the task at that date if it still runs.
//   msg NAME START SRC DST
//     an actor on SRC sleeps START s then puts a 1-byte message on mailbox NAME; an actor on
//     DST waits on that mailbox from the start.
// Output lines: NAME EVENT DATE  (EVENT: done, timeout, cancelled, sent, received)
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

struct Task {
  std::string name;
  double start, timeout, cancel_at;
  std::vector<sg4::Host*> hosts;
  std::vector<double> flops, bytes;
  sg4::ExecPtr exec;
  bool over = false;
  bool timed_out = false;
};

static void say(const std::string& name, const char* event)
{
  std::printf("%s %s %.17g\n", name.c_str(), event, sg4::Engine::get_clock());
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  e.load_platform(argv[1]);
  std::ifstream in(argv[2]);
  std::string line;
  static std::vector<std::shared_ptr<Task>> tasks;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kind;
    if (!(ls >> kind) || kind[0] == '#')
      continue;
    if (kind == "task") {
      auto t = std::make_shared<Task>();
      size_t n;
      ls >> t->name >> t->start >> t->timeout >> t->cancel_at >> n;
      for (size_t i = 0; i < n; i++) {
        std::string h;
        ls >> h;
        t->hosts.push_back(sg4::Host::by_name(h));
      }
      t->flops.resize(n);
      for (auto& f : t->flops)
        ls >> f;
      t->bytes.resize(n * n);
      for (auto& b : t->bytes)
        ls >> b;
      tasks.push_back(t);
      sg4::Actor::create(t->name, t->hosts[0], [t]() {
        if (t->start > 0)
          sg4::this_actor::sleep_for(t->start);
        t->exec = sg4::this_actor::exec_init(t->hosts, t->flops, t->bytes);
        t->exec->start();
        try {
          if (t->timeout >= 0)
            t->exec->wait_for(t->timeout);
          else
            t->exec->wait();
          t->over = true;
          say(t->name, "done");
        } catch (const simgrid::TimeoutException&) {
          t->timed_out = true;
          say(t->name, "timeout");
          // as in Batsim, the task keeps running while its actor lives on (an actor that
          // ends cancels its activities): cancel it at CANCEL_AT (always given with a timeout)
          sg4::this_actor::sleep_for(t->cancel_at - sg4::Engine::get_clock());
          if (t->exec->get_state() == sg4::Activity::State::STARTED)
            t->exec->cancel();
          say(t->name, "cancelled");
        } catch (const simgrid::CancelException&) {
          t->over = true;
          say(t->name, "cancelled");
        }
      });
      if (t->cancel_at >= 0 && t->timeout < 0)
        sg4::Actor::create(t->name + "_killer", t->hosts[0], [t]() {
          sg4::this_actor::sleep_for(t->cancel_at);
          if (!t->over && t->exec)
            t->exec->cancel();
        });
    } else if (kind == "msg") {
      std::string name, src, dst;
      double start;
      ls >> name >> start >> src >> dst;
      sg4::Actor::create(name + "_rcv", sg4::Host::by_name(dst), [name]() {
        sg4::Mailbox::by_name(name)->get<int>();
        say(name, "received");
      });
      sg4::Actor::create(name + "_snd", sg4::Host::by_name(src), [name, start]() {
        static int payload = 0;
        if (start > 0)
          sg4::this_actor::sleep_for(start);
        sg4::Mailbox::by_name(name)->put(&payload, 1);
        say(name, "sent");
      });
    }
  }
  e.run();
  return 0;
}
