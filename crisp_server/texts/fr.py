"""French (français), addressing the player with "tu". A no-break space (``\\u00a0``) goes before ``:`` and
``%``, as French typography wants, so that a line never starts with either."""

from __future__ import annotations

from typing import Final

from .catalog import Cards, Errors, Hints, Rules, Slots, Texts

TEXTS: Final = Texts(
    errors=Errors(
        bad_message="Le serveur n'a pas compris ce message.",
        too_large="Ce message est trop long.",
        rate_limited="Doucement, pas si vite.",
        room_not_found="Aucun salon n'a ce code.",
        room_full="Ce salon est complet (8 joueurs).",
        name_taken="Quelqu'un dans ce salon porte déjà ce nom.",
        bad_name="Un nom compte de 1 à 20 caractères, sans caractères de contrôle.",
        bad_token="Ta place est introuvable\u00a0: rejoins le salon à nouveau.",
        not_host="Seul l'hôte peut faire ça.",
        game_running="La partie a déjà commencé\u00a0: tu peux la regarder.",
        not_in_room="Rejoins d'abord un salon.",
        already_in_room="Tu es déjà dans un salon sur cette connexion.",
        not_seated="Les spectateurs peuvent seulement regarder.",
        wrong_phase="Ce n'est pas possible à ce moment de la partie.",
        not_enough_players="Une partie se joue de 2 à 8 joueurs.",
        no_such_seat="Cette place n'existe pas.",
        already_seated="Tu as déjà une place dans ce salon.",
        bad_reaction="Cette réaction n'est pas disponible.",
        unavailable="Le serveur ne peut pas enregistrer la partie pour le moment\u00a0: rien n'a été fait. "
        "Réessaie quand la partie reprendra.",
        not_a_bot="Aucun joueur ordinateur n'occupe cette place.",
        no_hints="Les conseils sont réservés aux parties d'entraînement contre l'ordinateur.",
        nothing_to_hint="Rien à décider pour l'instant\u00a0: attends ton tour.",
        not_a_lesson="Ce salon n'est pas une leçon.",
        lesson_other_move="La leçon attend un autre coup\u00a0: fais ce que montre sa consigne.",
        lesson_no_step="La leçon n'a pas d'étape dans ce sens.",
    ),
    rules=Rules(
        round_over="La manche est terminée.",
        not_your_turn="Ce n'est pas ton tour.",
        too_early="Un instant\u00a0: le joueur précédent peut encore annoncer Crisp.",
        already_drawn="Tu as déjà pioché une carte pendant ce tour.",
        nothing_drawn="Pioche d'abord une carte.",
        discard_draw_disabled="Piocher dans la défausse est désactivé dans ce salon.",
        discard_empty="La défausse est vide.",
        face_card_from_deck="Un valet, une dame ou un roi tiré de la pioche ne peut pas aller dans ta main.",
        must_swap="Une carte prise dans la défausse doit être échangée contre une carte de ta main.",
        king_must_be_played="Un roi tiré de la pioche doit être joué.",
        wrong_card="La carte que tu as piochée ne peut pas faire ça.",
        bad_target="Choisis une carte d'un autre joueur.",
        crisp_not_allowed="Tu ne peux pas annoncer Crisp maintenant.",
    ),
    unavailable="Le serveur ne peut pas enregistrer la partie pour le moment. Elle reprendra d'elle-même dès que "
    "possible\u00a0: reste ici.",
    hints=Hints(
        draw_only="Pioche une carte.",
        draw="Pioche une carte\u00a0: la défausse ne t'aide pas pour l'instant.",
        draw_known="Pioche une carte\u00a0: tu sais que celle du dessus est {card}.",
        take="Prends {card} dans la défausse à la place de ta {slot} (elle vaut sans doute environ {about}).",
        take_known="Prends {card} dans la défausse à la place de ta {slot}, {old}.",
        swap="Échange\u00a0: ta {slot} vaut sans doute plus que {card}.",
        swap_known="Échange\u00a0: ta {slot} est {old}, qui vaut plus que {card}.",
        must_swap="Échange-la contre ta {slot}\u00a0: une carte prise dans la défausse doit être gardée.",
        discard="Défausse-la\u00a0: {card} ne ferait pas baisser ton total.",
        jack="Valet\u00a0: regarde ta carte du milieu, tu ne la connais pas encore.",
        jack_known="Défausse le valet\u00a0: tu connais déjà ta carte du milieu.",
        queen="Dame\u00a0: donne ta {slot} contre la {their_slot} de {player} (elle vaut sans doute environ {about}).",
        queen_none="Défausse la dame\u00a0: aucun échange ne devrait t'aider.",
        king="Roi\u00a0: il doit être joué et te donne droit à deux coups de plus.",
        crisp="Annonce Crisp\u00a0: ton total est d'environ {sum}, sans doute le plus bas ({chance}\u00a0%).",
        no_crisp="N'annonce pas encore Crisp\u00a0: ton total est d'environ {sum}, et il n'a que {chance}\u00a0% "
        "de chances d'être le plus bas.",
    ),
    cards=Cards(
        ace="l'as",
        two="le 2",
        three="le 3",
        four="le 4",
        five="le 5",
        six="le 6",
        seven="le 7",
        eight="le 8",
        nine="le 9",
        ten="le 10",
        jack="le valet",
        queen="la dame",
        king="le roi",
    ),
    slots=Slots(left="carte de gauche", middle="carte du milieu", right="carte de droite"),
)
