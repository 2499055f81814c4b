// go-greedy: a Hollywood Gin bot in Go, speaking the hollywood_gin.v1 gRPC contract.
//
// A compiled bot: `make go-bot` generates the Go code of protocol/hollywood_gin.proto with protoc
// (package ginv1, import path "hollywoodgin/ginv1", from the .proto's go_package) and builds this
// file into ./gin-go-bot, offline, from Debian's Go packages. bot.toml names that binary directly.
//
// The strategy is the greedy one of the other samples: take the upcard or the discard only when
// that lowers the deadwood, throw the card that leaves the least deadwood (the highest card on a
// tie), knock as soon as a legal knock is within the knock limit.
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
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"

	pb "hollywoodgin/ginv1"
)

const (
	name              = "go-greedy" // as in bot.toml
	version           = "1.0.0"     // as in bot.toml
	protocolVersion   = 1
	maxMessageBytes   = 1 << 20
	defaultKnockLimit = 10
	// After the goodbye, how long to wait for the referee to close the stream before leaving.
	closeWait = 2 * time.Second
)

// --- cards ---------------------------------------------------------------------------------------

const (
	ranks = "A23456789TJQK" // ace low: A-2-3 is a run, Q-K-A is not
	suits = "cdhs"
)

// card is a parsed card notation such as "Td".
type card struct {
	text  string
	rank  int // 0..12
	suit  int // 0..3
	value int // 1..10
	index int // suit*13 + rank
}

func parseCard(text string) (card, error) {
	if len(text) != 2 {
		return card{}, fmt.Errorf("not a card: %q", text)
	}
	rank := strings.IndexByte(ranks, text[0])
	suit := strings.IndexByte(suits, text[1])
	if rank < 0 || suit < 0 {
		return card{}, fmt.Errorf("not a card: %q", text)
	}
	value := rank + 1
	if value > 10 {
		value = 10
	}
	return card{text: text, rank: rank, suit: suit, value: value, index: suit*13 + rank}, nil
}

func parseCards(texts []string) ([]card, error) {
	cards := make([]card, 0, len(texts))
	for _, text := range texts {
		c, err := parseCard(text)
		if err != nil {
			return nil, err
		}
		cards = append(cards, c)
	}
	return cards, nil
}

// --- deadwood ------------------------------------------------------------------------------------

// allMelds lists every meld within cards as a bit mask over their positions: sets of 3 or 4 cards
// of one rank (every 3-card subset of a 4-card set too) and runs of 3 or more consecutive ranks of
// one suit (every sub-run of a longer run).
func allMelds(cards []card) []uint32 {
	var melds []uint32
	var byRank [13][]int
	var bySuit [4][13]int // position+1, 0 if absent
	for position, c := range cards {
		byRank[c.rank] = append(byRank[c.rank], position)
		bySuit[c.suit][c.rank] = position + 1
	}
	for _, positions := range byRank {
		n := len(positions)
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				for c := b + 1; c < n; c++ {
					melds = append(melds, 1<<positions[a]|1<<positions[b]|1<<positions[c])
				}
			}
		}
		if n == 4 {
			melds = append(melds, 1<<positions[0]|1<<positions[1]|1<<positions[2]|1<<positions[3])
		}
	}
	for _, bySlot := range bySuit {
		for start := 0; start < len(ranks); start++ {
			var mask uint32
			for rank := start; rank < len(ranks) && bySlot[rank] > 0; rank++ {
				mask |= 1 << (bySlot[rank] - 1)
				if rank-start >= 2 {
					melds = append(melds, mask)
				}
			}
		}
	}
	return melds
}

// minDeadwood is the least deadwood of cards (at most 16 of them), by exhaustive search.
func minDeadwood(cards []card) int {
	if len(cards) > 16 {
		panic(fmt.Sprintf("too many cards for the search: %d", len(cards)))
	}
	melds := allMelds(cards)
	memo := make(map[uint32]int)
	// best(rest): the least deadwood of the cards whose positions are set in rest. The lowest card
	// left is either deadwood or in some meld made only of cards left.
	var best func(rest uint32) int
	best = func(rest uint32) int {
		if rest == 0 {
			return 0
		}
		if known, ok := memo[rest]; ok {
			return known
		}
		low := rest & -rest
		result := cards[bits.TrailingZeros32(low)].value + best(rest&^low)
		for _, meld := range melds {
			if meld&low != 0 && meld&rest == meld {
				if deadwood := best(rest &^ meld); deadwood < result {
					result = deadwood
				}
			}
		}
		memo[rest] = result
		return result
	}
	return best(1<<len(cards) - 1)
}

func without(cards []card, thrown card) []card {
	rest := make([]card, 0, len(cards))
	for _, c := range cards {
		if c.text != thrown.text {
			rest = append(rest, c)
		}
	}
	return rest
}

// bestThrow picks among candidates (cards of the 11-card hand) the one to throw: the least
// deadwood left, the highest card value on a tie, then the lowest card index. ok is false when
// there are no candidates.
func bestThrow(hand []card, candidates []card) (best card, deadwood int, ok bool) {
	for _, c := range candidates {
		left := minDeadwood(without(hand, c))
		if !ok || left < deadwood ||
			(left == deadwood && c.value > best.value) ||
			(left == deadwood && c.value == best.value && c.index < best.index) {
			best, deadwood, ok = c, left, true
		}
	}
	return best, deadwood, ok
}

// improves says whether taking c into the 10-card hand (then throwing another) lowers the deadwood.
func improves(hand []card, c card) bool {
	_, after, ok := bestThrow(append(append([]card{}, hand...), c), hand)
	return ok && after < minDeadwood(hand)
}

// --- decisions -----------------------------------------------------------------------------------

// series is what the bot keeps of one series, made from the series' Welcome. A new Welcome (the
// next series of a sitting) replaces it whole.
type series struct {
	seat       uint32
	knockLimit int
}

func seriesOf(welcome *pb.Welcome) series {
	knockLimit := defaultKnockLimit
	if limit := welcome.GetRules().GetKnockLimit(); limit > 0 {
		knockLimit = int(limit)
	}
	return series{seat: welcome.GetSeat(), knockLimit: knockLimit}
}

// decide returns one of the request's legal actions, for the series current. A request for
// another seat than the Welcome's means the bot and the referee disagree on which series this is
// (a Welcome missed or misread): the bot refuses it rather than play blind.
func decide(request *pb.DecisionRequest, current series) (*pb.Action, error) {
	legal := request.GetLegalActions()
	if len(legal) == 0 {
		return nil, errors.New("the request lists no legal actions")
	}
	view := request.GetObservation()
	if view == nil {
		return nil, errors.New("the request has no observation")
	}
	if view.GetSeat() != current.seat {
		return nil, fmt.Errorf("the request is for seat %d, but this series' welcome gave seat %d",
			view.GetSeat(), current.seat)
	}
	knockLimit := current.knockLimit
	hand, err := parseCards(view.GetHand())
	if err != nil {
		return nil, err
	}
	pile, err := parseCards(view.GetDiscardPile())
	if err != nil {
		return nil, err
	}
	var top *card
	if len(pile) > 0 {
		top = &pile[len(pile)-1]
	}

	switch request.GetKind() {
	case pb.DecisionKind_DECISION_KIND_UPCARD:
		var take, pass *pb.Action
		for _, action := range legal {
			if choice := action.GetUpcard(); choice != nil {
				if choice.GetTake() {
					take = action
				} else {
					pass = action
				}
			}
		}
		if take != nil && top != nil && improves(hand, *top) {
			return take, nil
		}
		if pass != nil {
			return pass, nil
		}
		if take != nil {
			return take, nil
		}
	case pb.DecisionKind_DECISION_KIND_DRAW:
		var fromPile, fromStock *pb.Action
		for _, action := range legal {
			switch action.GetDraw().GetSource() {
			case pb.DrawSource_DRAW_SOURCE_DISCARD_PILE:
				fromPile = action
			case pb.DrawSource_DRAW_SOURCE_STOCK:
				fromStock = action
			}
		}
		if fromPile != nil && top != nil && improves(hand, *top) {
			return fromPile, nil
		}
		if fromStock != nil {
			return fromStock, nil
		}
		if fromPile != nil {
			return fromPile, nil
		}
	case pb.DecisionKind_DECISION_KIND_DISCARD:
		// A card taken from the discard pile this turn may not be thrown (the legal actions say so
		// too; this keeps the bot honest if they ever did not).
		taken := view.GetTakenThisTurn()
		knocks := map[string]*pb.Action{}
		discards := map[string]*pb.Action{}
		var knockCards, discardCards []card
		for _, action := range legal {
			var text string
			var into map[string]*pb.Action
			var list *[]card
			if knock := action.GetKnock(); knock != nil {
				text, into, list = knock.GetCard(), knocks, &knockCards
			} else if discard := action.GetDiscard(); discard != nil {
				text, into, list = discard.GetCard(), discards, &discardCards
			} else {
				continue
			}
			if text == taken {
				continue
			}
			c, err := parseCard(text)
			if err != nil {
				return nil, err
			}
			into[text] = action
			*list = append(*list, c)
		}
		if c, deadwood, ok := bestThrow(hand, knockCards); ok && deadwood <= knockLimit {
			return knocks[c.text], nil
		}
		if c, _, ok := bestThrow(hand, discardCards); ok {
			return discards[c.text], nil
		}
	default:
		return nil, fmt.Errorf("unknown decision kind %v", request.GetKind())
	}
	return nil, fmt.Errorf("no legal action fits decision kind %v", request.GetKind())
}

// answer builds the message answering requestID with the legal action chosen.
func answer(requestID uint64, chosen *pb.Action) (*pb.BotMessage, error) {
	action := &pb.Action{RequestId: requestID}
	switch choice := chosen.GetChoice().(type) {
	case *pb.Action_Upcard:
		action.Choice = &pb.Action_Upcard{Upcard: &pb.UpcardChoice{Take: choice.Upcard.GetTake()}}
	case *pb.Action_Draw:
		action.Choice = &pb.Action_Draw{Draw: &pb.Draw{Source: choice.Draw.GetSource()}}
	case *pb.Action_Discard:
		action.Choice = &pb.Action_Discard{Discard: &pb.Discard{Card: choice.Discard.GetCard()}}
	case *pb.Action_Knock:
		// Let the referee lay the melds out (the legal knocks do not declare them).
		action.Choice = &pb.Action_Knock{Knock: &pb.Knock{Card: choice.Knock.GetCard()}}
	default:
		return nil, errors.New("a legal action has no choice set")
	}
	return &pb.BotMessage{Kind: &pb.BotMessage_Action{Action: action}}, nil
}

// --- the stream ----------------------------------------------------------------------------------

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", name, fmt.Sprintf(format, args...))
	os.Exit(1)
}

func main() {
	address, hasAddress := os.LookupEnv("GIN_REFEREE")
	token, hasToken := os.LookupEnv("GIN_TOKEN")
	if !hasAddress || address == "" || !hasToken {
		fail("GIN_REFEREE and GIN_TOKEN must be set (the referee sets them)")
	}
	// grpc-go dials "unix:///path" addresses as they are.
	conn, err := grpc.Dial(address,
		grpc.WithInsecure(),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMessageBytes),
			grpc.MaxCallSendMsgSize(maxMessageBytes),
		),
	)
	if err != nil {
		fail("cannot dial %s: %v", address, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := pb.NewRefereeClient(conn).Play(ctx)
	if err != nil {
		fail("cannot open the Play stream: %v", err)
	}
	hello := &pb.Hello{
		Token:           token,
		Name:            name,
		Version:         version,
		ProtocolVersion: protocolVersion,
		PlaysOn:         true,
	}
	if err := stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Hello{Hello: hello}}); err != nil {
		fail("cannot send the hello: %v", err)
	}

	var current *series // this series' record, from its Welcome
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			fail("the referee closed the stream without a goodbye")
		}
		if err != nil {
			fail("stream closed by the referee: %v", err)
		}
		switch kind := message.GetKind().(type) {
		case *pb.RefereeMessage_Welcome:
			// The first series, or the next one of a sitting: start it afresh.
			next := seriesOf(kind.Welcome)
			current = &next
		case *pb.RefereeMessage_Request:
			requestID := kind.Request.GetRequestId()
			if current == nil {
				fail("error on request %d: the referee sent a decision request before the welcome", requestID)
			}
			chosen, err := decide(kind.Request, *current)
			if err != nil {
				fail("error on request %d: %v", requestID, err)
			}
			reply, err := answer(requestID, chosen)
			if err != nil {
				fail("error on request %d: %v", requestID, err)
			}
			if err := stream.Send(reply); err != nil {
				fail("error on request %d: cannot send the action: %v", requestID, err)
			}
		case *pb.RefereeMessage_Goodbye:
			goodbye := kind.Goodbye
			if goodbye.GetReason() != pb.GoodbyeReason_GOODBYE_REASON_SERIES_OVER {
				fail("referee said goodbye: %v %s", goodbye.GetReason(), goodbye.GetDetail())
			}
			_ = stream.CloseSend()
			leave(stream)
			return
		}
		// Events are not needed by this bot; they and any kind it does not know are ignored.
	}
}

// leave waits (at most closeWait) for the referee to close the stream after its goodbye.
func leave(stream pb.Referee_PlayClient) {
	done := make(chan struct{})
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				break
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}
