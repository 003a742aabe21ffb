"""Italian (italiano), addressing the player with "tu". A card's name carries its article (``il 5``, ``l'8``):
the sentences put it where no preposition would merge with it (``del``, ``al``)."""

from __future__ import annotations

from typing import Final

from .catalog import Cards, Errors, Hints, Rules, Slots, Texts

TEXTS: Final = Texts(
    errors=Errors(
        bad_message="Il server non ha capito questo messaggio.",
        too_large="Questo messaggio è troppo lungo.",
        rate_limited="Rallenta un po'.",
        room_not_found="Non esiste una stanza con questo codice.",
        room_full="Questa stanza è piena (8 giocatori).",
        name_taken="Qualcuno in questa stanza ha già questo nome.",
        bad_name="Un nome ha da 1 a 20 caratteri, senza caratteri di controllo.",
        bad_token="Il tuo posto non è stato trovato: entra di nuovo.",
        not_host="Solo l'host può farlo.",
        game_running="La partita è già iniziata: puoi guardarla.",
        not_in_room="Prima entra in una stanza.",
        already_in_room="Sei già in una stanza su questa connessione.",
        not_seated="Gli spettatori possono solo guardare.",
        wrong_phase="Non si può fare in questo momento della partita.",
        not_enough_players="Una partita richiede da 2 a 8 giocatori.",
        no_such_seat="Questo posto non esiste.",
        already_seated="Hai già un posto in questa stanza.",
        bad_reaction="Questa reazione non è disponibile.",
        unavailable="Il server non riesce a salvare la partita in questo momento: l'azione non è stata eseguita. "
        "Riprova quando la partita riprende.",
        not_a_bot="Su questo posto non c'è un giocatore controllato dal computer.",
        no_hints="I suggerimenti ci sono solo nelle partite di allenamento contro il computer.",
        nothing_to_hint="Ora non c'è niente da decidere: aspetta il tuo turno.",
        not_a_lesson="Questa stanza non è una lezione.",
        lesson_other_move="La lezione aspetta un'altra mossa: fai ciò che indica il suggerimento.",
        lesson_no_step="La lezione non ha passi in quella direzione.",
    ),
    rules=Rules(
        round_over="Il round è finito.",
        not_your_turn="Non è il tuo turno.",
        too_early="Aspetta un attimo: il giocatore precedente può ancora chiamare Crisp.",
        already_drawn="Hai già pescato una carta in questo turno.",
        nothing_drawn="Prima pesca una carta.",
        discard_draw_disabled="In questa stanza non si può pescare dalla pila degli scarti.",
        discard_empty="La pila degli scarti è vuota.",
        face_card_from_deck="Un fante, una donna o un re pescati dal mazzo non possono entrare tra le tue carte.",
        must_swap="Una carta presa dalla pila degli scarti va scambiata con una delle tue carte.",
        king_must_be_played="Un re pescato dal mazzo va giocato.",
        wrong_card="La carta che hai pescato non può farlo.",
        bad_target="Scegli una carta di un altro giocatore.",
        crisp_not_allowed="Ora non puoi chiamare Crisp.",
    ),
    unavailable="Il server non riesce a salvare la partita in questo momento. Riprenderà da sola appena possibile: "
    "resta qui.",
    hints=Hints(
        draw_only="Pesca una carta dal mazzo.",
        draw="Pesca dal mazzo: la pila degli scarti ora non ti aiuta.",
        draw_known="Pesca dal mazzo: sai che in cima c'è {card}.",
        take="Prendi {card} dalla pila degli scarti al posto della tua {slot} (che probabilmente vale circa {about}).",
        take_known="Prendi {card} dalla pila degli scarti al posto della tua {slot}, cioè {old}.",
        swap="Scambia: {card} probabilmente vale meno della tua {slot}.",
        swap_known="Scambia: la tua {slot} è {old}, e {card} vale meno.",
        must_swap="Scambiala con la tua {slot}: una carta presa dalla pila degli scarti va tenuta.",
        discard="Scartala: {card} non abbasserebbe il tuo totale.",
        jack="Fante: guarda la tua carta centrale, non la conosci ancora.",
        jack_known="Scarta il fante: la tua carta centrale la conosci già.",
        queen="Donna: cedi la tua {slot} in cambio della {their_slot} di {player} (che probabilmente vale circa "
        "{about}).",
        queen_none="Scarta la donna: probabilmente nessuno scambio ti aiuta.",
        king="Re: va giocato e ti dà due mosse in più.",
        crisp="Chiama Crisp: il tuo totale è circa {sum}, probabilmente il più basso ({chance}%).",
        no_crisp="Non chiamare ancora Crisp: il tuo totale è circa {sum}, e le probabilità che sia il più basso sono "
        "solo {chance} su 100.",
    ),
    cards=Cards(
        ace="l'asso",
        two="il 2",
        three="il 3",
        four="il 4",
        five="il 5",
        six="il 6",
        seven="il 7",
        eight="l'8",
        nine="il 9",
        ten="il 10",
        jack="il fante",
        queen="la donna",
        king="il re",
    ),
    slots=Slots(left="carta di sinistra", middle="carta centrale", right="carta di destra"),
)
