// cpp-greedy: a Hollywood Gin bot in C++, speaking the hollywood_gin.v1 gRPC contract.
//
// A compiled bot: `make cpp-bot` generates the C++ code of protocol/hollywood_gin.proto with
// protoc and its gRPC plugin (namespace hollywood_gin::v1, files hollywood_gin.pb.h and
// hollywood_gin.grpc.pb.h, under build/cpp-bot/) and links this file into ./gin-cpp-bot, offline,
// from Debian's gRPC and protobuf packages, statically. bot.toml names that binary directly.
//
// The strategy is the greedy one of the other samples (the same as sample_bots/go): take the
// upcard or the discard only when that lowers the deadwood, throw the card that leaves the least
// deadwood (the highest card on a tie), knock as soon as a legal knock is within the knock limit.
//
// The referee starts this process with GIN_REFEREE (the address, e.g. unix:///tmp/x/referee.sock)
// and GIN_TOKEN (the one-time secret). The bot opens one Play stream, says Hello, answers each
// DecisionRequest with one of its legal actions (echoing request_id), and exits 0 on
// Goodbye(SERIES_OVER). Any error is printed to stderr (with the request id) and exits 1.
// Nothing is ever written to stdout.
//
// It plays on (Hello.plays_on): the referee may play several series in a row on this one stream,
// each opened by its own Welcome. Everything the bot knows of a series (its seat, the knock limit)
// is one value made afresh from each Welcome, so nothing of one series leaks into the next; it
// has no random generator and remembers nothing of the opponent's cards, so there is nothing
// else to reset. (A bot that draws at random seeds a new generator from each Welcome's bot_seed.)

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "hollywood_gin.grpc.pb.h"
#include "hollywood_gin.pb.h"

namespace pb = hollywood_gin::v1;

namespace {

constexpr const char* kName = "cpp-greedy";  // as in bot.toml
constexpr const char* kVersion = "1.0.0";    // as in bot.toml
constexpr std::uint32_t kProtocolVersion = 1;
constexpr int kMaxMessageBytes = 1 << 20;
constexpr int kDefaultKnockLimit = 10;
// After the goodbye, how long to wait for the referee to close the stream before leaving.
constexpr std::chrono::seconds kCloseWait{2};

// A bot error: its message goes to stderr, and the bot exits 1.
struct BotError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "[%s] %s\n", kName, message.c_str());
  std::fflush(stderr);
  std::_Exit(1);  // at once: no gRPC threads to wind down, no destructors to wait on
}

// --- cards ---------------------------------------------------------------------------------------

constexpr std::string_view kRanks = "A23456789TJQK";  // ace low: A-2-3 is a run, Q-K-A is not
constexpr std::string_view kSuits = "cdhs";

// A parsed card notation such as "Td".
struct Card {
  std::string text;
  int rank;   // 0..12
  int suit;   // 0..3
  int value;  // 1..10
  int index;  // suit*13 + rank
};

Card parse_card(const std::string& text) {
  auto rank = text.size() == 2 ? kRanks.find(text[0]) : std::string_view::npos;
  auto suit = text.size() == 2 ? kSuits.find(text[1]) : std::string_view::npos;
  if (rank == std::string_view::npos || suit == std::string_view::npos) {
    throw BotError("not a card: \"" + text + "\"");
  }
  int r = static_cast<int>(rank), s = static_cast<int>(suit);
  return Card{text, r, s, r + 1 > 10 ? 10 : r + 1, s * 13 + r};
}

template <typename Texts>
std::vector<Card> parse_cards(const Texts& texts) {
  std::vector<Card> cards;
  cards.reserve(texts.size());
  for (const auto& text : texts) cards.push_back(parse_card(text));
  return cards;
}

// --- deadwood ------------------------------------------------------------------------------------

// Every meld within cards as a bit mask over their positions: sets of 3 or 4 cards of one rank
// (every 3-card subset of a 4-card set too) and runs of 3 or more consecutive ranks of one suit
// (every sub-run of a longer run).
std::vector<std::uint32_t> all_melds(const std::vector<Card>& cards) {
  std::vector<std::uint32_t> melds;
  std::vector<int> by_rank[13];
  int by_suit[4][13] = {};  // position+1, 0 if absent
  for (std::size_t position = 0; position < cards.size(); ++position) {
    by_rank[cards[position].rank].push_back(static_cast<int>(position));
    by_suit[cards[position].suit][cards[position].rank] = static_cast<int>(position) + 1;
  }
  for (const auto& positions : by_rank) {
    std::size_t n = positions.size();
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b)
        for (std::size_t c = b + 1; c < n; ++c)
          melds.push_back(1u << positions[a] | 1u << positions[b] | 1u << positions[c]);
    if (n == 4) {
      melds.push_back(1u << positions[0] | 1u << positions[1] | 1u << positions[2] |
                      1u << positions[3]);
    }
  }
  for (const auto& by_slot : by_suit) {
    for (int start = 0; start < 13; ++start) {
      std::uint32_t mask = 0;
      for (int rank = start; rank < 13 && by_slot[rank] > 0; ++rank) {
        mask |= 1u << (by_slot[rank] - 1);
        if (rank - start >= 2) melds.push_back(mask);
      }
    }
  }
  return melds;
}

// The least deadwood of cards (at most 16 of them), by exhaustive search.
int min_deadwood(const std::vector<Card>& cards) {
  if (cards.size() > 16) {
    throw BotError("too many cards for the search: " + std::to_string(cards.size()));
  }
  const auto melds = all_melds(cards);
  std::vector<int> memo(std::size_t{1} << cards.size(), -1);
  // best(rest): the least deadwood of the cards whose positions are set in rest. The lowest card
  // left is either deadwood or in some meld made only of cards left.
  auto best = [&](auto&& self, std::uint32_t rest) -> int {
    if (rest == 0) return 0;
    if (memo[rest] >= 0) return memo[rest];
    std::uint32_t low = rest & (~rest + 1);
    int result = cards[__builtin_ctz(low)].value + self(self, rest & ~low);
    for (std::uint32_t meld : melds) {
      if ((meld & low) != 0 && (meld & rest) == meld) {
        int deadwood = self(self, rest & ~meld);
        if (deadwood < result) result = deadwood;
      }
    }
    return memo[rest] = result;
  };
  return best(best, static_cast<std::uint32_t>((std::size_t{1} << cards.size()) - 1));
}

std::vector<Card> without(const std::vector<Card>& cards, const Card& thrown) {
  std::vector<Card> rest;
  for (const auto& card : cards) {
    if (card.text != thrown.text) rest.push_back(card);
  }
  return rest;
}

// The card to throw, with the deadwood it leaves.
struct Throw {
  Card card;
  int deadwood;
};

// Picks among candidates (cards of the 11-card hand) the one to throw: the least deadwood left,
// the highest card value on a tie, then the lowest card index. Empty when there are no candidates.
std::optional<Throw> best_throw(const std::vector<Card>& hand, const std::vector<Card>& candidates) {
  std::optional<Throw> best;
  for (const auto& card : candidates) {
    int left = min_deadwood(without(hand, card));
    if (!best || left < best->deadwood ||
        (left == best->deadwood && card.value > best->card.value) ||
        (left == best->deadwood && card.value == best->card.value &&
         card.index < best->card.index)) {
      best = Throw{card, left};
    }
  }
  return best;
}

// Whether taking card into the 10-card hand (then throwing another) lowers the deadwood.
bool improves(const std::vector<Card>& hand, const Card& card) {
  auto taken = hand;
  taken.push_back(card);
  auto after = best_throw(taken, hand);
  return after && after->deadwood < min_deadwood(hand);
}

// --- decisions -----------------------------------------------------------------------------------

// What the bot keeps of one series, made from the series' Welcome. A new Welcome (the next series
// of a sitting) replaces it whole.
struct Series {
  std::uint32_t seat;
  int knock_limit;
};

Series series_of(const pb::Welcome& welcome) {
  auto limit = welcome.rules().knock_limit();
  return Series{welcome.seat(), limit > 0 ? static_cast<int>(limit) : kDefaultKnockLimit};
}

pb::Action choose_upcard(const pb::DecisionRequest& request, const std::vector<Card>& hand,
                         const std::optional<Card>& top) {
  const pb::Action *take = nullptr, *pass = nullptr;
  for (const auto& action : request.legal_actions()) {
    if (action.has_upcard()) (action.upcard().take() ? take : pass) = &action;
  }
  if (take && top && improves(hand, *top)) return *take;
  if (pass) return *pass;
  if (take) return *take;
  throw BotError("no legal action fits the upcard offer");
}

pb::Action choose_draw(const pb::DecisionRequest& request, const std::vector<Card>& hand,
                       const std::optional<Card>& top) {
  const pb::Action *from_pile = nullptr, *from_stock = nullptr;
  for (const auto& action : request.legal_actions()) {
    if (!action.has_draw()) continue;
    if (action.draw().source() == pb::DRAW_SOURCE_DISCARD_PILE) from_pile = &action;
    if (action.draw().source() == pb::DRAW_SOURCE_STOCK) from_stock = &action;
  }
  if (from_pile && top && improves(hand, *top)) return *from_pile;
  if (from_stock) return *from_stock;
  if (from_pile) return *from_pile;
  throw BotError("no legal action fits the draw");
}

pb::Action choose_discard(const pb::DecisionRequest& request, const std::vector<Card>& hand,
                          int knock_limit) {
  // A card taken from the discard pile this turn may not be thrown (the legal actions say so too;
  // this keeps the bot honest if they ever did not).
  const std::string& taken = request.observation().taken_this_turn();
  std::map<std::string, const pb::Action*> knocks, discards;
  std::vector<Card> knock_cards, discard_cards;
  for (const auto& action : request.legal_actions()) {
    if (action.has_knock() && action.knock().card() != taken) {
      knocks[action.knock().card()] = &action;
      knock_cards.push_back(parse_card(action.knock().card()));
    } else if (action.has_discard() && action.discard().card() != taken) {
      discards[action.discard().card()] = &action;
      discard_cards.push_back(parse_card(action.discard().card()));
    }
  }
  if (auto knock = best_throw(hand, knock_cards); knock && knock->deadwood <= knock_limit) {
    return *knocks.at(knock->card.text);
  }
  if (auto discard = best_throw(hand, discard_cards)) return *discards.at(discard->card.text);
  throw BotError("no legal action fits the discard");
}

// One of the request's legal actions, for the series current. A request for another seat than
// the Welcome's means the bot and the referee disagree on which series this is (a Welcome missed
// or misread): the bot refuses it rather than play blind.
pb::Action decide(const pb::DecisionRequest& request, const Series& current) {
  if (request.legal_actions().empty()) throw BotError("the request lists no legal actions");
  if (!request.has_observation()) throw BotError("the request has no observation");
  const auto& view = request.observation();
  if (view.seat() != current.seat) {
    throw BotError("the request is for seat " + std::to_string(view.seat()) +
                   ", but this series' welcome gave seat " + std::to_string(current.seat));
  }
  const auto hand = parse_cards(view.hand());
  const auto pile = parse_cards(view.discard_pile());
  std::optional<Card> top;
  if (!pile.empty()) top = pile.back();
  switch (request.kind()) {
    case pb::DECISION_KIND_UPCARD:
      return choose_upcard(request, hand, top);
    case pb::DECISION_KIND_DRAW:
      return choose_draw(request, hand, top);
    case pb::DECISION_KIND_DISCARD:
      return choose_discard(request, hand, current.knock_limit);
    default:
      throw BotError("unknown decision kind " + pb::DecisionKind_Name(request.kind()));
  }
}

// The message answering request_id with the legal action chosen.
pb::BotMessage answer(std::uint64_t request_id, const pb::Action& chosen) {
  pb::BotMessage message;
  pb::Action* action = message.mutable_action();
  action->set_request_id(request_id);
  switch (chosen.choice_case()) {
    case pb::Action::kUpcard:
      action->mutable_upcard()->set_take(chosen.upcard().take());
      break;
    case pb::Action::kDraw:
      action->mutable_draw()->set_source(chosen.draw().source());
      break;
    case pb::Action::kDiscard:
      action->mutable_discard()->set_card(chosen.discard().card());
      break;
    case pb::Action::kKnock:
      // Let the referee lay the melds out (the legal knocks do not declare them).
      action->mutable_knock()->set_card(chosen.knock().card());
      break;
    default:
      throw BotError("a legal action has no choice set");
  }
  return message;
}

// --- the stream ----------------------------------------------------------------------------------

using Stream = grpc::ClientReaderWriter<pb::BotMessage, pb::RefereeMessage>;

// Waits (at most kCloseWait) for the referee to close the stream after its goodbye.
void leave(grpc::ClientContext& context, Stream& stream) {
  stream.WritesDone();
  std::promise<void> closed;
  auto done = closed.get_future();
  std::thread reader([&stream, &closed] {
    pb::RefereeMessage ignored;
    while (stream.Read(&ignored)) {
    }
    closed.set_value();
  });
  if (done.wait_for(kCloseWait) != std::future_status::ready) context.TryCancel();
  reader.join();
  stream.Finish();
}

// Answers one request; the reply, or a BotError naming what went wrong.
pb::BotMessage reply_to(const pb::DecisionRequest& request, const std::optional<Series>& current) {
  if (!current) throw BotError("the referee sent a decision request before the welcome");
  return answer(request.request_id(), decide(request, *current));
}

}  // namespace

int main() {
  const char* address = std::getenv("GIN_REFEREE");
  const char* token = std::getenv("GIN_TOKEN");
  if (address == nullptr || *address == '\0' || token == nullptr) {
    fail("GIN_REFEREE and GIN_TOKEN must be set (the referee sets them)");
  }
  // gRPC C++ dials "unix:///path" addresses as they are.
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxMessageBytes);
  arguments.SetMaxSendMessageSize(kMaxMessageBytes);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments);
  auto stub = pb::Referee::NewStub(channel);
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = stub->Play(&context);

  pb::BotMessage hello_message;
  pb::Hello* hello = hello_message.mutable_hello();
  hello->set_token(token);
  hello->set_name(kName);
  hello->set_version(kVersion);
  hello->set_protocol_version(kProtocolVersion);
  hello->set_plays_on(true);
  if (!stream->Write(hello_message)) {
    fail("cannot send the hello: " + stream->Finish().error_message());
  }

  std::optional<Series> current;  // this series' record, from its Welcome
  pb::RefereeMessage message;
  while (stream->Read(&message)) {
    if (message.has_welcome()) {
      // The first series, or the next one of a sitting: start it afresh.
      current = series_of(message.welcome());
    } else if (message.has_request()) {
      const auto id = std::to_string(message.request().request_id());
      pb::BotMessage reply;
      try {
        reply = reply_to(message.request(), current);
      } catch (const BotError& error) {
        fail("error on request " + id + ": " + error.what());
      }
      if (!stream->Write(reply)) fail("error on request " + id + ": cannot send the action");
    } else if (message.has_goodbye()) {
      const auto& goodbye = message.goodbye();
      if (goodbye.reason() != pb::GOODBYE_REASON_SERIES_OVER) {
        fail("referee said goodbye: " + pb::GoodbyeReason_Name(goodbye.reason()) + " " +
             goodbye.detail());
      }
      leave(context, *stream);
      return 0;
    }
    // Events are not needed by this bot; they and any kind it does not know are ignored.
  }
  grpc::Status status = stream->Finish();
  if (status.ok()) fail("the referee closed the stream without a goodbye");
  fail("stream closed by the referee: " + status.error_message());
}
